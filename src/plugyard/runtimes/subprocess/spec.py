"""What one wrapper plugin runs: resolved once, at registration, from its descriptor.

- The executable is pinned to an absolute, real path: a command with a ``/`` (or a file
  in the plugin folder) is relative to the folder, anything else is looked up on ``PATH``;
  ``python``/``python3`` always mean the interpreter running plugyard. It must be on the
  allowlist: that interpreter, ``node`` when installed, the operator's extra entries, and —
  for trusted plugins only — files inside the plugin's own folder.
- The environment is ``PATH``, ``LANG`` and the manifest's ``env``; nothing else leaks.
- Caps: input (``maxInputSizeBytes``, ``config.max_input_bytes``; 1 MiB), one stdout line
  (``config.max_line_bytes``; 4 MiB), kept stderr (64 KiB).
- Mode: ``config.mode`` ``oneshot`` | ``persistent``; by default persistent when the
  manifest declares ``protocolVersion`` and for plugyard's own Python worker. Pool size
  ``config.workers`` (default 2).
- Untrusted plugins always run sandboxed; a trusted one when ``config.sandbox`` is true.
- ``-m plugyard.runtimes.subprocess.pyworker <folder>`` is plugyard's own Python worker.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from plugyard.manifest.dialects.mrp_fields import NODE_HOST
from plugyard.manifest.model import PluginDescriptor, SubprocessRuntime
from plugyard.runtimes.base import Target
from plugyard.runtimes.sandbox import (
    Confinement,
    SandboxLimits,
    confine,
    inside,
    python_path,
    sandboxed,
)
from plugyard.runtimes.sandbox.uids import UIDS

PYWORKER = "plugyard.runtimes.subprocess.pyworker"
#: plugyard's Node host for MRP-VM typed plugins: what ``NODE_HOST`` in args stands for.
NODE_HOST_SCRIPT = Path(__file__).with_name("mrp_host.mjs")
MIB = 1024 * 1024
DEFAULT_INPUT_BYTES = MIB
DEFAULT_LINE_BYTES = 4 * MIB
DEFAULT_STDERR_BYTES = 64 * 1024
#: Time a cancellable wrapper has to answer a cancelled request before its worker dies.
CANCEL_GRACE_S = 2.0
_PYTHON_NAMES = frozenset({"python", "python3", f"python3.{sys.version_info.minor}"})
_SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
Mode = Literal["oneshot", "persistent"]


class SpecError(Exception):
    """The plugin cannot run here; the message says why."""


@dataclass(frozen=True)
class SubprocessSettings:
    """The operator's side: executables allowed beside the defaults, pool size, what
    each sandbox may use. ``cgroups=False`` keeps sandboxes out of cgroups even where the
    host has them (the fallback: a uid per sandbox as root); ``sandbox_uids`` is the
    block those uids come from."""

    allow: tuple[str, ...] = ()
    workers: int = 2
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    cgroups: bool = True
    sandbox_uids: range = UIDS

    def confine(self) -> Confinement:
        """A cgroup and uid of its own for one new sandbox (``OSError`` if refused)."""
        return confine(self.limits, cgroups=self.cgroups, uid_range=self.sandbox_uids)

    def allowlist(self) -> frozenset[str]:
        found = {os.path.realpath(sys.executable)}
        node = shutil.which("node")
        if node is not None:
            found.add(os.path.realpath(node))
        for entry in self.allow:
            resolved = shutil.which(entry) if "/" not in entry else entry
            if resolved:
                found.add(os.path.realpath(resolved))
        return frozenset(found)


@dataclass(frozen=True)
class WrapperSpec:
    plugin_id: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
    folder: str | None
    sandbox: bool
    mode: Mode
    workers: int
    max_input: int
    max_line: int
    max_stderr: int
    timeout_s: float | None
    #: How long a wrapper that takes ``cancel`` has to answer one before the worker is
    #: killed; ``None``: it cannot be told, so the worker is killed at once.
    cancel_grace_s: float | None = None

    def launch(self, limits: SandboxLimits, confinement: Confinement | None = None) -> list[str]:
        """The argv to start: the wrapper itself, or the wrapper inside its sandbox."""
        if not self.sandbox:
            return list(self.argv)
        folder = self.folder or "/var/empty"
        argv = [self.argv[0], *(_inside_arg(a, folder) for a in self.argv[1:])]
        return sandboxed(argv, folder=folder, env=self.env, limits=limits, confinement=confinement)


def resolve(target: Target, settings: SubprocessSettings) -> WrapperSpec:
    runtime = target.descriptor.runtime
    if not isinstance(runtime, SubprocessRuntime):
        raise SpecError(f"not a subprocess plugin (runtime {runtime.kind!r})")
    folder = _folder(target.location)
    config = target.descriptor.config
    sandbox = needs_sandbox(target)
    if sandbox and folder and os.geteuid() == 0 and os.stat(folder).st_mode & 0o005 != 0o005:
        # As root the sandbox runs as an unprivileged uid, which must be able to read it.
        raise SpecError(f"the plugin folder {folder} is not readable by others (the sandbox)")
    executable = _executable(runtime.command, folder)
    allowed = settings.allowlist()
    own = folder is not None and Path(executable).is_relative_to(Path(folder).resolve())
    if executable not in allowed and not (own and target.trust == "trusted"):
        raise SpecError(f"the executable {executable} is not on the subprocess allowlist")
    args = list(runtime.args)
    pyworker = "-m" in args and args[args.index("-m") + 1 : args.index("-m") + 2] == [PYWORKER]
    if pyworker:
        args = _pyworker_args(args, folder)
    args = [str(NODE_HOST_SCRIPT) if arg == NODE_HOST else arg for arg in args]
    env = {"PATH": _SANDBOX_PATH if sandbox else os.environ.get("PATH", _SANDBOX_PATH)}
    env["LANG"] = os.environ.get("LANG", "C.UTF-8")
    env.update(runtime.env)
    configured = config.get("mode")
    # plugyard's own worker takes a while to start (pydantic): keep it, as wrappers
    # that declare a protocol version are kept.
    keep = pyworker or runtime.protocol_version is not None
    mode: Mode = "persistent" if keep else "oneshot"
    if configured == "oneshot":
        mode = "oneshot"
    elif configured == "persistent":
        mode = "persistent"
    timeout_ms = target.descriptor.timeout_ms
    cwd = runtime.cwd if runtime.cwd and os.path.isabs(runtime.cwd) else folder
    if runtime.cwd and not os.path.isabs(runtime.cwd) and folder:
        cwd = str(Path(folder, runtime.cwd))
    return WrapperSpec(
        plugin_id=target.descriptor.id,
        argv=(executable, *args),
        env=env,
        cwd=cwd,
        folder=folder,
        sandbox=sandbox,
        mode=mode,
        workers=_positive(config.get("workers"), settings.workers),
        max_input=_positive(
            target.descriptor.x.get("/maxInputSizeBytes"),
            _positive(config.get("max_input_bytes"), DEFAULT_INPUT_BYTES),
        ),
        max_line=_positive(config.get("max_line_bytes"), DEFAULT_LINE_BYTES),
        max_stderr=DEFAULT_STDERR_BYTES,
        timeout_s=timeout_ms / 1000 if timeout_ms else None,
        cancel_grace_s=CANCEL_GRACE_S if pyworker or config.get("cancel") is True else None,
    )


def is_pyworker(descriptor: PluginDescriptor) -> bool:
    """Whether the plugin runs in plugyard's own Python worker (a Python plugin moved out
    of process): its code then describes itself as the in-process runtime reads it."""
    runtime = descriptor.runtime
    return isinstance(runtime, SubprocessRuntime) and PYWORKER in runtime.args


def needs_sandbox(target: Target) -> bool:
    """Untrusted code always; trusted code when its ``config.sandbox`` asks for it."""
    return target.trust == "untrusted" or target.descriptor.config.get("sandbox") is True


def pyworker_argv(folder: str) -> list[str]:
    """How a host starts its Python worker for a plugin folder."""
    return [sys.executable, "-I", "-S", "-m", PYWORKER, folder]


def _pyworker_args(args: list[str], folder: str | None) -> list[str]:
    # ``-I -S`` reads no .pth files, so plugyard itself is not importable: put its source
    # and site-packages on sys.path by hand, then run the worker module.
    where = args[args.index(PYWORKER) + 1 :]
    plugin_folder = where[0] if where else (folder or ".")
    boot = (
        f"import sys;sys.path[:0]={list(python_path())!r};"
        f"import runpy;runpy.run_module({PYWORKER!r},run_name='__main__',alter_sys=True)"
    )
    return ["-I", "-S", "-c", boot, plugin_folder, *where[1:]]


def _inside_arg(arg: str, folder: str) -> str:
    if arg.startswith("/") and Path(arg).exists():
        return inside(arg, folder)
    return arg


def _executable(command: str, folder: str | None) -> str:
    if command in _PYTHON_NAMES:
        return os.path.realpath(sys.executable)
    local = Path(folder, command) if folder else None
    if os.path.isabs(command):
        found: str | None = command
    elif "/" in command or (local is not None and local.is_file()):
        if local is None:
            raise SpecError(f"{command!r} is relative, and the plugin has no folder")
        found = str(local)
    else:
        found = shutil.which(command)
    if found is None or not os.path.isfile(found):
        raise SpecError(f"the executable {command!r} is not found")
    if not os.access(found, os.X_OK):
        raise SpecError(f"{found} is not executable")
    return os.path.realpath(found)


def _folder(location: str | None) -> str | None:
    if location is None:
        return None
    path = Path(location)
    if path.is_file():
        path = path.parent
    return str(path.resolve()) if path.is_dir() else None


def _positive(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    )
