"""A plugin folder's fingerprint: what its files are, as cheaply as the file system says.

Each file below the folder (``__pycache__``, hidden and dependency folders apart, as the
plugin walk skips them) adds its relative path, modification and change times (ns),
size and inode. A file edited, touched, added, removed, renamed or replaced (an archive
extracted over it keeps the old mtime, but not the ctime, which no user can set) changes
the fingerprint; its content is never read.

Timestamps have a granularity: a file written twice within one tick can keep its time
and size. So a fingerprint whose newest time is less than :data:`SETTLE_NS` old is not
*settled*, and is not remembered: the next start reads the folder again (git's "racily
clean" rule). Symbolic links are followed; a linked folder counts by its own times,
its content is not walked.
"""

from __future__ import annotations

import hashlib
import operator
import os
from collections.abc import Iterable
from dataclasses import dataclass

SETTLE_NS = 2_000_000_000
_NEVER = 1 << 62  # a time no clock reaches: the fingerprint never settles
#: Folders below a plugin folder that are not its own files (the plugin walk's rule).
SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})
_BY_NAME = operator.attrgetter("name")


@dataclass(frozen=True, slots=True)
class Fingerprint:
    digest: str
    settled: bool


def fingerprint(entries: Iterable[os.DirEntry[str]], context: str, now_ns: int) -> Fingerprint:
    """The fingerprint of a folder from its (sorted) entries; ``context`` is mixed in, so a
    change of it changes every fingerprint."""
    stamps = [context]
    newest = _add(stamps, entries, "")
    digest = hashlib.blake2b("\n".join(stamps).encode(), digest_size=16).hexdigest()
    return Fingerprint(digest, newest < now_ns - SETTLE_NS)


def _add(stamps: list[str], entries: Iterable[os.DirEntry[str]], prefix: str) -> int:
    newest = 0
    for entry in entries:
        name = prefix + entry.name
        try:
            if entry.is_dir() and not entry.is_symlink():
                if entry.name[0] == "." or entry.name in SKIPPED:
                    continue
                with os.scandir(entry.path) as found:
                    inner = sorted(found, key=_BY_NAME)
                newest = max(newest, _add(stamps, inner, name + "/"))
                continue
            st = entry.stat()
        except OSError:  # gone while we looked, or unreadable: never settled
            stamps.append(f"{name}\0?")
            newest = _NEVER
            continue
        stamps.append(f"{name}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_size}\0{st.st_ino}")
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    return newest
