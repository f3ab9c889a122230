"""Async generators stream: progress first, the last value (or an Outcome) is the result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plugyard.runtimes.base import Outcome, Progress
from plugyard.runtimes.python import InProcessRuntime

from .conftest import context, stream, target, write

MANIFEST = """
    id: streamer
    name: Streamer
    description: Streams.
    capabilities:
      - {id: count, description: Counts., parameters: [{name: n, type: integer}]}
      - {id: explicit, description: Ends with an Outcome.}
      - {id: progress_only, description: Only progress.}
      - {id: breaks, description: Raises half-way.}
      - {id: forever, description: Never ends.}
      - {id: returns_iterator, description: A coroutine that returns an async iterator.}
"""
CODE = """
    import asyncio
    from plugyard.runtimes.base import Outcome, Progress

    async def count(n):
        for i in range(n):
            yield f"step {i}"
        yield {"total": n}

    async def explicit():
        yield Progress(message="working", percent=50)
        yield Outcome(status="success", data="done")
        yield "never seen"

    async def progress_only():
        yield Progress(message="a")
        yield Progress(message="b")

    async def breaks():
        yield {"message": "half", "percent": 50}
        yield "almost"
        raise RuntimeError("disk on fire")

    async def forever():
        yield Progress(message="started")
        await asyncio.Event().wait()

    async def _numbers():
        yield 1
        yield 2

    async def returns_iterator():
        return _numbers()
"""


@pytest.fixture
def streamer(tmp_path: Path) -> Path:
    return write(tmp_path, {"plugin.yaml": MANIFEST, "plugin.py": CODE})


def test_every_value_but_the_last_is_progress_and_the_last_is_the_result(
    streamer: Path, runtime: InProcessRuntime
) -> None:
    items = stream(runtime, target(streamer), "count", n=3)
    assert items[:-1] == [Progress(message=f"step {i}") for i in range(3)]
    assert items[-1] == Outcome(data={"total": 3})


def test_a_yielded_outcome_ends_the_stream(streamer: Path, runtime: InProcessRuntime) -> None:
    items = stream(runtime, target(streamer), "explicit")
    assert items == [Progress(message="working", percent=50.0), Outcome(data="done")]


def test_a_stream_of_progress_only_has_no_data(streamer: Path, runtime: InProcessRuntime) -> None:
    items = stream(runtime, target(streamer), "progress_only")
    assert items[-1] == Outcome(data=None)
    assert len(items) == 3


def test_a_plugin_raising_mid_stream_ends_with_plugin_error(
    streamer: Path, runtime: InProcessRuntime
) -> None:
    items = stream(runtime, target(streamer), "breaks")
    assert items[0] == Progress(message="half", percent=50.0)
    assert items[1] == Progress(message="almost")
    last = items[-1]
    assert isinstance(last, Outcome) and last.error is not None
    assert last.error.code == "plugin_error"
    assert "disk on fire" in last.error.message


def test_a_coroutine_returning_an_async_iterator_streams(
    streamer: Path, runtime: InProcessRuntime
) -> None:
    items = stream(runtime, target(streamer), "returns_iterator")
    assert items == [Progress(data=1), Outcome(data=2)]


def test_cancelling_a_stream_reaches_the_plugin(streamer: Path, runtime: InProcessRuntime) -> None:
    plugin = target(streamer)
    operation = plugin.descriptor.operation("forever")
    assert operation is not None

    async def scenario() -> None:
        answer = await runtime.invoke(plugin, operation, {}, context(), None)
        assert not isinstance(answer, Outcome)
        iterator = aiter(answer)
        assert await anext(iterator) == Progress(message="started")
        task = asyncio.ensure_future(anext(iterator))
        await asyncio.sleep(0)  # let it start waiting: a yield to the loop, not a timed wait
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
