"""Asking a wrapper to describe itself, at registration, and checking what it says.

Registration is synchronous, so this runs the wrapper with plain pipes and ``select``
under one deadline; it reads at most one capped line at a time and kills the whole tree
afterwards, whatever happened. A sandboxed wrapper describes itself in a confinement of
its own, like any worker: a fork bomb elsewhere cannot make it fail. A wrapper that
answers ``describe`` with an error does not describe itself (allowed); one that answers
with garbage, or with a plugin whose id or operations disagree with its manifest, is a
liar and stays unavailable. One that exits before it answers is refused with the end of
its stderr (an import the sandbox forbids, a missing module: the wrapper's own words).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import tempfile
import time
from typing import IO, Any

from plugyard.errors import ManifestError
from plugyard.manifest.load import load_data
from plugyard.manifest.model import PluginDescriptor
from plugyard.runtimes.base import ErrorInfo
from plugyard.runtimes.sandbox import Confinement
from plugyard.runtimes.subprocess import protocol
from plugyard.runtimes.subprocess.process import _prepare_child, kill_tree
from plugyard.runtimes.subprocess.spec import SubprocessSettings, WrapperSpec

DESCRIBE_TIMEOUT_S = 15.0
#: A wrapper whose code cannot even load says so (plugyard's Node host does): it is not
#: a wrapper that merely does not describe itself.
LOAD_FAILED = "plugin_load_failed"
#: How much of a wrapper's stderr a refusal quotes (its end: where the error is).
STDERR_TAIL = 2048


class DescribeError(Exception):
    """``code`` (from errors.py) and why the wrapper cannot be registered."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def describe(spec: WrapperSpec, settings: SubprocessSettings, timeout_s: float) -> Any | None:
    """The wrapper's ``describe`` result, or ``None`` when it answered with an error."""
    deadline = time.monotonic() + timeout_s
    env = {"PATH": spec.env["PATH"]} if spec.sandbox else dict(spec.env)
    try:
        confinement = settings.confine() if spec.sandbox else None
    except OSError as exc:
        raise DescribeError("plugin_unavailable", f"no sandbox to start in: {exc}") from None
    try:
        # A file, not a pipe: a wrapper that writes much to stderr can never block on it.
        with tempfile.TemporaryFile() as errors:
            return _ask(spec, settings, confinement, env, deadline, errors)
    finally:
        if confinement is not None:
            confinement.release()


def _ask(
    spec: WrapperSpec,
    settings: SubprocessSettings,
    confinement: Confinement | None,
    env: dict[str, str],
    deadline: float,
    errors: IO[bytes],
) -> Any | None:
    try:
        proc = subprocess.Popen(
            spec.launch(settings.limits, confinement),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            cwd=None if spec.sandbox else spec.cwd,
            start_new_session=True,
            preexec_fn=_prepare_child,
        )
    except OSError as exc:
        raise DescribeError("plugin_unavailable", f"the wrapper does not start: {exc}") from None
    try:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(protocol.request(0, "describe", {}) + b"\n")
            proc.stdin.flush()
        except OSError as exc:
            raise DescribeError("plugin_error", f"the wrapper's stdin closed: {exc}") from None
        for line in _lines(proc.stdout.fileno(), deadline, spec.max_line):
            try:
                message = protocol.parse(line)
            except protocol.ProtocolError as exc:
                raise DescribeError("wrapper_protocol_error", str(exc)) from None
            if isinstance(message, protocol.HostCall):
                reply = ErrorInfo("capability_unavailable", "no host during describe")
                proc.stdin.write(protocol.host_reply(message.id, error=reply))
                proc.stdin.flush()
            elif message.id != 0:
                raise DescribeError("wrapper_protocol_error", f"unknown request {message.id}")
            elif isinstance(message, protocol.Reply):
                if message.error is not None and message.error.code == LOAD_FAILED:
                    raise DescribeError(LOAD_FAILED, message.error.message)
                return None if message.error is not None else message.result
        proc.wait()  # its stderr is complete once it has exited
        raise DescribeError(
            "plugin_error", "the wrapper closed stdout before describing" + _stderr(errors)
        )
    finally:
        if confinement is not None:
            confinement.kill()
        kill_tree(proc.pid)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def check_description(
    found: Any, manifest: PluginDescriptor, *, code_refines: bool = False
) -> PluginDescriptor:
    """The plugin ``found`` describes; :class:`DescribeError` when it disagrees with the
    manifest. ``code_refines`` (plugyard's own Python worker): the code may add
    operations (Shu's ``list_actions``) to the manifest's, never drop one."""
    try:
        plugins = load_data([found]).plugins
    except ManifestError as exc:
        raise DescribeError(
            "wrapper_protocol_error", f"describe is not a manifest: {exc}"
        ) from None
    same = [p for p in plugins if p.id == manifest.id]
    if not same:
        ids = ", ".join(p.id for p in plugins)
        raise DescribeError("wrapper_protocol_error", f"describe names {ids}, not {manifest.id!r}")
    declared = {op.id for op in manifest.operations}
    described = {op.id for op in same[0].operations}
    if code_refines and declared <= described:
        return same[0]
    if declared and declared != described:
        raise DescribeError(
            "wrapper_protocol_error",
            f"describe lists operations {sorted(described)}; the manifest {sorted(declared)}",
        )
    return same[0]


def _stderr(errors: IO[bytes]) -> str:
    """The end of what the wrapper wrote to stderr (its traceback says why it died)."""
    errors.seek(0, os.SEEK_END)
    size = errors.tell()
    errors.seek(max(0, size - STDERR_TAIL))
    text = errors.read().decode("utf-8", "replace").strip()
    if not text:
        return ""
    return f"; its stderr {'ends' if size > STDERR_TAIL else 'says'}: {text}"


def _lines(fd: int, deadline: float, cap: int) -> Any:
    buffer = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            while (end := buffer.find(b"\n")) >= 0:
                yield bytes(buffer[: end + 1])
                del buffer[: end + 1]
            if len(buffer) > cap:
                raise DescribeError("wrapper_protocol_error", f"a line exceeds {cap} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise DescribeError("timeout", "the wrapper did not describe itself in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            buffer += chunk
