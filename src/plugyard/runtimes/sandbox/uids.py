"""A host uid (and gid) of its own for each sandbox, when plugyard runs as root.

``RLIMIT_NPROC`` counts every process of a uid on the machine: with one uid for all
sandboxes, one fork bomb exhausts it for every other sandbox. With a uid each, it is a
per-sandbox budget, and no sandbox can signal or ptrace another's processes.

The uids come from :data:`UIDS`, a block outside what distributions, systemd's dynamic
users and container ranges hand out. A uid is picked at random from the block and taken
only when no process on the machine runs as it (another plugyard on the same host, a
leftover of a killed one), and never twice at once by this process.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

#: The block sandbox uids come from (1879048192 + 0 … 65535): systemd documents
#: 0x70000000… as unused; an operator whose directory service uses it picks another.
UIDS = range(0x70000000, 0x70000000 + 0x10000)
_LOCK = threading.Lock()
_LEASED: set[int] = set()


def lease(uids: range = UIDS) -> int:
    """A uid of ``uids`` no process runs as and no other sandbox of ours holds."""
    with _LOCK:
        busy = _LEASED | in_use()
        for _ in range(64):
            uid = uids[secrets.randbelow(len(uids))]
            if uid not in busy:
                _LEASED.add(uid)
                return uid
    raise OSError(f"no free sandbox uid in {uids.start}…{uids.stop - 1}")


def release(uid: int) -> None:
    with _LOCK:
        _LEASED.discard(uid)


def in_use() -> set[int]:
    """The real uids of every process on the machine (as far as ``/proc`` shows)."""
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_bytes()
        except OSError:
            continue
        start = status.find(b"\nUid:")
        if start >= 0:
            found.add(int(status[start + 5 :].split(maxsplit=1)[0]))
    return found
