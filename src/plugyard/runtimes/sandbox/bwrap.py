"""The argv that runs a program under bubblewrap, and whether bubblewrap works here.

What the sandboxed program sees: ``/usr`` (with the ``/lib*``, ``/bin`` links of the host),
the Python prefix and plugyard's own package, read-only; its plugin folder at
:data:`PLUGIN_DIR`; a private ``/tmp``, ``/proc`` and ``/dev``; nothing else. It has no
network (a network namespace with only a loopback of its own), its own PID namespace
(killing bubblewrap kills every process inside), a new session (no terminal to inject
into), a cleared environment and resource limits.

Who it runs as depends on who we are. As root, bubblewrap needs no user namespace: the
program is started through ``setpriv`` as an unprivileged host uid/gid with every
capability and the bounding set dropped and ``no_new_privs`` set. That uid is 65534 unless
the caller gives the sandbox one of its own (:mod:`.confine` does, so that
``RLIMIT_NPROC`` counts one sandbox's processes, not every sandbox's). As anyone else,
bubblewrap makes a user namespace and maps the caller to uid/gid 65534 inside; the host
uid is then the caller's own, already unprivileged.

A confinement's cgroup is entered before anything else runs: ``/bin/sh`` writes its own
pid into the group's ``cgroup.procs`` files and execs the rest (no Python between fork
and exec, and a failed write stops the launch).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugyard.runtimes.sandbox.confine import Confinement

#: Where the plugin folder appears inside the sandbox.
PLUGIN_DIR = "/plugin"
#: The uid and gid sandboxed code runs as ("nobody") unless its confinement gives it one.
SANDBOX_UID = 65534
_MIB = 1024 * 1024
# plugyard's own package folder (this file is plugyard/runtimes/sandbox/bwrap.py).
_PACKAGE = Path(__file__).resolve().parents[2]
# Files of /etc that dynamic linking and locale handling read; nothing else of /etc.
# Node.js reads OpenSSL's configuration at start; the public CA certificates come with it.
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/ssl")
# Writes $$ into each file up to "--", then execs what follows; any failed write ends it.
_ENTER = 'for f in "$@"; do shift; [ "$f" = -- ] && exec "$@"; echo $$ >"$f" || exit 125; done'


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed process tree.

    Per process (``setrlimit``): ``memory_mb`` is the address space (``RLIMIT_AS``), which
    counts reservations, not use — raise it for runtimes that reserve much (a JVM);
    ``cpu_s`` is CPU time over the process's whole life, so a persistent worker that used
    it up is killed and replaced; ``open_files``; ``file_size_mb``.

    Per sandbox: ``processes`` (threads count too) is the group's ``pids.max`` and the
    ``RLIMIT_NPROC`` of the sandbox's own uid; ``total_memory_mb`` is the memory in use by
    all of its processes together, swap and its private ``/tmp`` included. Both hold
    only as far as the host allows (see :mod:`.confine`)."""

    memory_mb: int = 1024
    cpu_s: int = 60
    open_files: int = 256
    processes: int = 256
    file_size_mb: int = 64
    total_memory_mb: int = 1024

    def rlimits(self, nproc: int | None = None) -> dict[str, int]:
        """``prlimit`` option name → value (``nproc`` instead of ``processes``)."""
        return {
            "as": self.memory_mb * _MIB,
            "cpu": self.cpu_s,
            "nofile": self.open_files,
            "nproc": self.processes if nproc is None else nproc,
            "fsize": self.file_size_mb * _MIB,
        }


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@cache
def unavailable_reason() -> str | None:
    """Why programs cannot be sandboxed here (``None`` when they can). Tries bubblewrap
    once per process with a real, trivial sandbox: being installed is not enough (a
    container may forbid the namespaces it needs)."""
    if sys.platform != "linux":
        return f"bubblewrap sandboxes need Linux, not {sys.platform}"
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is needed to drop root inside the sandbox"
    probe = sandboxed([sys.executable, "-I", "-S", "-c", "pass"], folder="/", env={})
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap does not start: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"bubblewrap cannot make a sandbox here: {tail or done.returncode}"
    return None


def sandboxed(
    argv: Sequence[str],
    *,
    folder: str,
    env: Mapping[str, str],
    limits: SandboxLimits = SandboxLimits(),
    writable: bool = False,
    confinement: Confinement | None = None,
) -> list[str]:
    """The argv that runs ``argv`` in a sandbox (see the module docstring).

    ``folder`` is bound at :data:`PLUGIN_DIR` (read-only unless ``writable``) and is the
    working directory; ``argv`` must already name paths as the sandbox sees them (use
    :func:`inside` for those under ``folder``). ``env`` is the whole environment.
    ``confinement`` gives the sandbox its own cgroup and uid."""
    if not argv:
        raise ValueError("nothing to run")
    bwrap = bwrap_path() or "bwrap"
    root = os.geteuid() == 0
    uid = SANDBOX_UID
    out: list[str] = []
    if confinement is not None:
        uid = confinement.uid if confinement.uid is not None else SANDBOX_UID
        if confinement.enter():
            out += ["/bin/sh", "-c", _ENTER, "sh", *confinement.enter(), "--"]
    nproc = confinement.nproc if confinement is not None else None
    out += [*_limit_prefix(limits.rlimits(nproc)), bwrap]
    if root:
        out += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        out += ["--unshare-cgroup-try"]
    else:
        out += ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID)]
        out += ["--gid", str(SANDBOX_UID)]
    out += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    out += _system_binds()
    # The private /tmp comes before the Python binds: an installation or checkout that
    # lives under /tmp is then bound on top of it instead of hidden by it.
    out += ["--perms", "1777", "--tmpfs", "/tmp"]
    for path in _parents(_runtime_dirs()):
        # Made by hand: the ones bubblewrap makes on its own are not always traversable.
        out += ["--perms", "0755", "--dir", path]
    for path in _runtime_dirs():
        out += ["--ro-bind", path, path]
    out += ["--bind" if writable else "--ro-bind", str(Path(folder).resolve()), PLUGIN_DIR]
    out += ["--proc", "/proc", "--dev", "/dev"]
    out += ["--chdir", PLUGIN_DIR, "--clearenv"]
    for key, value in env.items():
        out += ["--setenv", key, value]
    if root:
        out += [
            shutil.which("setpriv") or "/usr/bin/setpriv",
            f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
        ]  # fmt: skip
    return [*out, *argv]


def inside(path: str | os.PathLike[str], folder: str) -> str:
    """``path`` as the sandbox sees it: under :data:`PLUGIN_DIR` when it is in ``folder``,
    else unchanged (a system or Python path, bound at the same place)."""
    resolved, base = Path(path).resolve(), Path(folder).resolve()
    if resolved == base:
        return PLUGIN_DIR
    if resolved.is_relative_to(base):
        return f"{PLUGIN_DIR}/{resolved.relative_to(base).as_posix()}"
    return str(path)


def _limit_prefix(values: dict[str, int]) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is not None:
        shown = {k: "unlimited" if v == resource.RLIM_INFINITY else v for k, v in values.items()}
        return [prlimit, *(f"--{name}={value}" for name, value in shown.items()), "--"]
    # Without util-linux, our own interpreter sets the limits and execs bubblewrap.
    code = (
        "import os,resource as r,sys\n"
        f"for k,v in {values!r}.items():\n"
        " n=getattr(r,'RLIMIT_'+k.upper());r.setrlimit(n,(v,v))\n"
        "os.execv(sys.argv[1],sys.argv[1:])"
    )
    return [sys.executable, "-I", "-S", "-c", code]


def _system_binds() -> list[str]:
    out = ["--ro-bind", "/usr", "/usr"]
    for name in ("/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"):
        path = Path(name)
        if path.is_symlink():
            out += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            out += ["--ro-bind", name, name]
    out += ["--perms", "0755", "--dir", "/etc"]
    for name in _ETC_FILES:
        if os.path.exists(name):
            out += ["--ro-bind", name, name]
    return out


@cache
def _runtime_dirs() -> tuple[str, ...]:
    """The Python installation (prefix, venv, site-packages) and plugyard's own package,
    minus what ``/usr`` already covers and minus nested duplicates."""
    found = {
        sys.prefix,
        sys.base_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        str(_PACKAGE),
    }
    paths = sorted({str(Path(p).resolve()) for p in found if p and os.path.isdir(p)})
    kept: list[str] = []
    for path in paths:
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if any(path == k or path.startswith(k + "/") for k in kept):
            continue
        kept.append(path)
    return tuple(kept)


def _parents(paths: Sequence[str]) -> list[str]:
    found = {str(parent) for path in paths for parent in Path(path).parents}
    found.discard("/")
    return sorted(found, key=lambda p: (p.count("/"), p))


def python_path() -> tuple[str, ...]:
    """Where plugyard and its dependencies import from (the ``-S`` interpreter inside a
    sandbox reads no ``.pth`` file, so these go on ``sys.path`` by hand)."""
    source = str(_PACKAGE.parent)
    paths = (source, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"])
    return tuple(dict.fromkeys(str(Path(p).resolve()) for p in paths))
