"""Wrapper plugins written for one test, and ways to see what processes they left."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from plugyard.manifest.load import load_file
from plugyard.manifest.model import Operation, PluginDescriptor, SubprocessRuntime
from plugyard.runtimes.base import CallContext, Outcome, Progress, Target
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, pyworker_argv

HERE = Path(__file__).parent
MARKER = "PLUGYARD_TEST_MARKER"
T = TypeVar("T")


def chaos_target(
    folder: Path,
    *,
    mode: str = "persistent",
    trust: str = "trusted",
    timeout_ms: int | None = 1000,
    env: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[Target, str]:
    """A target running ``chaos_wrapper.py`` copied into ``folder``, and its marker."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "chaos_wrapper.py", folder / "wrapper.py")
    marker = secrets.token_hex(8)
    descriptor = PluginDescriptor(
        id="chaos",
        name="chaos",
        operations=(Operation(id="run"), Operation(id="stream", streaming=True)),
        runtime=SubprocessRuntime(
            command="python3",
            args=("wrapper.py",),
            protocol_version="1",
            env={MARKER: marker, **(env or {})},
        ),
        config={"mode": mode, **(config or {})},
        timeout_ms=timeout_ms,
    )
    return Target(descriptor, str(folder), trust, marker), marker  # type: ignore[arg-type]


def pyworker_target(folder: Path, trust: str = "trusted") -> Target:
    """The plugin of ``folder``'s manifest, served by plugyard's Python worker."""
    descriptor = load_file(folder / "plugin.yaml").plugins[0]
    argv = pyworker_argv(str(folder))
    runtime = SubprocessRuntime(command=argv[0], args=tuple(argv[1:]), protocol_version="1")
    registered = descriptor.model_copy(update={"runtime": runtime})
    return Target(registered, str(folder), trust, f"pyw-{trust}")  # type: ignore[arg-type]


_RUNNERS: dict[int, asyncio.Runner] = {}


@pytest.fixture
def runtime() -> Iterator[SubprocessPluginRuntime]:
    """A runtime (describing nothing at check) whose calls share one event loop, as in a
    server; its workers are closed after the test."""
    made = SubprocessPluginRuntime(describe=False)
    with asyncio.Runner() as runner:
        _RUNNERS[id(made)] = runner
        yield made
        runner.run(made.aclose())
        del _RUNNERS[id(made)]


def run(runtime: SubprocessPluginRuntime, coro: Coroutine[Any, Any, T]) -> T:
    return _RUNNERS[id(runtime)].run(coro)


async def until(done: Callable[[], bool], within_s: float = 10.0) -> None:
    """Wait on the running loop until ``done()``; fail after ``within_s``."""
    deadline = asyncio.get_running_loop().time() + within_s
    while not done():
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.005)


def in_flight(runtime: SubprocessPluginRuntime) -> int:
    """Requests the runtime's workers are running now."""
    return sum(w.in_flight for p in runtime._pools.values() for w in p.workers)


def call(
    runtime: SubprocessPluginRuntime, target: Target, params: dict[str, Any], host: Any = None
) -> Outcome:
    async def go() -> Outcome:
        answer = await runtime.invoke(
            target, target.descriptor.operations[0], params, CallContext("t"), host
        )
        assert isinstance(answer, Outcome)
        return answer

    return run(runtime, go())


def marked(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose environment carries ``marker``."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            env = Path(entry.path, "environ").read_bytes()
            state = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != b"Z":
            found.append(int(entry.name))
    return found


def none_left(marker: str, within_s: float = 2.0) -> bool:
    deadline = time.monotonic() + within_s
    while marked(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


__all__ = [
    "Progress",
    "call",
    "chaos_target",
    "marked",
    "none_left",
    "pyworker_target",
    "run",
    "runtime",
]
