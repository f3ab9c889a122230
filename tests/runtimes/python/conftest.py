"""Plugin folders written for one test, and a way to call them through the runtime."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.manifest.load import load_file
from plugyard.registry.model import content_hash
from plugyard.runtimes.base import CallContext, Outcome, Progress, Target
from plugyard.runtimes.python import InProcessRuntime


def write(folder: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text, dedented) under ``folder``."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return folder


def target(folder: Path, manifest: str = "plugin.yaml", **kw: Any) -> Target:
    descriptor = load_file(folder / manifest).plugins[0]
    return Target(descriptor, str(folder), content_hash=content_hash(descriptor), **kw)


def context(**kw: Any) -> CallContext:
    return CallContext(request_id="test", **kw)


async def invoke(
    runtime: InProcessRuntime, plugin: Target, op: str, params: dict[str, Any], **kw: Any
) -> Any:
    operation = plugin.descriptor.operation(op)
    assert operation is not None, op
    return await runtime.invoke(plugin, operation, params, context(**kw), None)


def call(runtime: InProcessRuntime, plugin: Target, op: str, /, **params: Any) -> Outcome:
    """One call, to its outcome (a stream is drained; its events are dropped)."""

    async def run() -> Outcome:
        answer = await invoke(runtime, plugin, op, params)
        if isinstance(answer, Outcome):
            return answer
        items = [item async for item in answer]
        assert isinstance(items[-1], Outcome)
        return items[-1]

    return asyncio.run(run())


def stream(
    runtime: InProcessRuntime, plugin: Target, op: str, /, **params: Any
) -> list[Progress | Outcome]:
    async def run() -> list[Progress | Outcome]:
        answer = await invoke(runtime, plugin, op, params)
        assert not isinstance(answer, Outcome), answer
        assert isinstance(answer, AsyncIterator)
        return [item async for item in answer]

    return asyncio.run(run())


@pytest.fixture
def runtime() -> InProcessRuntime:
    return InProcessRuntime()
