"""A flow's span is the parent of the calls it makes, across awaits and concurrent tasks."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest, Executor
from plugyard.feeds.scheduler import FeedScheduler
from plugyard.manifest.model import Operation
from plugyard.pipelines.engine import Engine
from plugyard.reasoning.service import ReasoningService
from plugyard.routing.chat import ChatFlow
from plugyard.routing.flow import Router
from plugyard.runtimes.base import CallContext
from plugyard.telemetry import flow_span, traced

from .conftest import Recorded

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from execution.conftest import FunctionRuntime, Table, descriptor
from governance.governed import governed

POLICY = """
subjects: {bob: {roles: [reader]}}
grants: [{to: "role:reader", plugin: mail, operation: digest, effect: allow}]
"""


def test_a_feed_tick_is_the_parent_of_its_call(otel: Recorded) -> None:
    table, runtime = Table(), FunctionRuntime()
    table.add(descriptor("mail", Operation(id="digest"), default_feed_op="digest",
                         allowed_feed_ops=("digest",)))  # fmt: skip
    runtime.functions[("mail", "digest")] = lambda: {"items": 1}
    g = governed(table, runtime, POLICY)  # type: ignore[arg-type]
    scheduler = FeedScheduler(g.executor, g.governance.feeds, g.governance.kv, table)
    feed = scheduler.add(owner="bob", plugin_id="mail", interval_s=60)
    tick = asyncio.run(scheduler.run(feed.id))
    assert (tick.status, tick.error_code) == ("success", None)
    (flow,) = otel.spans("plugyard.")
    (call,) = otel.spans("execute_tool")
    assert flow.name == "plugyard.feed.tick"
    assert (flow.attributes or {})["plugyard.flow"] == "feed.tick"
    assert call.parent is not None and flow.context is not None
    assert call.parent.span_id == flow.context.span_id
    assert call.context is not None and call.context.trace_id == flow.context.trace_id


def test_concurrent_flows_each_keep_their_own_calls(otel: Recorded) -> None:
    table, runtime = Table(), FunctionRuntime()
    table.add(descriptor("echo", Operation(id="say")))

    async def say(text: str) -> str:
        await asyncio.sleep(0)  # a switch to the other flow mid-call
        return text

    runtime.functions[("echo", "say")] = say
    executor = Executor(table, {"python": runtime})

    @traced("ask")
    async def flow(name: str) -> None:
        for _ in range(2):
            await executor.call(CallRequest("echo", "say", {"text": name}, CallContext(name)))

    async def both() -> None:
        await asyncio.gather(flow("a"), flow("b"))

    asyncio.run(both())
    flows = otel.spans("plugyard.ask")
    calls = otel.spans("execute_tool")
    assert len(flows) == 2 and len(calls) == 4
    ids = [f.context.span_id for f in flows if f.context is not None]
    for call in calls:
        assert call.parent is not None and call.parent.span_id in ids
    by_parent: dict[int, set[Any]] = {}
    for call in calls:
        assert call.parent is not None and call.attributes is not None
        by_parent.setdefault(call.parent.span_id, set()).add(call.attributes["gen_ai.tool.call.id"])
    assert sorted(by_parent.values(), key=sorted) == [{"a"}, {"b"}]


def test_a_plugins_own_spans_are_siblings_of_its_call_under_the_flow(otel: Recorded) -> None:
    # The call's span is built when the call ends, so it is never current while the
    # plugin runs (docs/telemetry.md): what the plugin traces hangs under the flow.
    table, runtime = Table(), FunctionRuntime()
    table.add(descriptor("probe", Operation(id="run")))

    def run() -> str:
        with otel.telemetry.tracer.start_as_current_span("probe.work"):
            return "done"

    runtime.functions[("probe", "run")] = run
    executor = Executor(table, {"python": runtime})

    async def flow() -> None:
        with flow_span("ask"):
            assert (await executor.call(CallRequest("probe", "run", {}))).ok

    asyncio.run(flow())
    (parent,) = otel.spans("plugyard.ask")
    (own,) = otel.spans("probe.work")
    (call,) = otel.spans("execute_tool")
    assert parent.context is not None and own.parent is not None and call.parent is not None
    assert own.parent.span_id == call.parent.span_id == parent.context.span_id


def test_a_flow_that_raises_ends_its_span_as_failed(otel: Recorded) -> None:
    @traced("reason")
    async def failing() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        asyncio.run(failing())
    (span,) = otel.spans()
    assert span.status.status_code.name == "ERROR"
    assert [e.name for e in span.events] == ["exception"]


def test_flow_span_is_a_block_too(otel: Recorded) -> None:
    with flow_span("pipeline.run", {"plugyard.pipeline": "p"}):
        pass
    (span,) = otel.spans()
    assert span.name == "plugyard.pipeline.run"
    assert (span.attributes or {})["plugyard.pipeline"] == "p"


ENTRIES = [(Router.ask, "ask"), (ChatFlow.complete, "chat"), (ReasoningService.reason, "reason"),
           (Engine.run, "pipeline.run"), (FeedScheduler._run, "feed.tick")]  # fmt: skip


@pytest.mark.parametrize(("entry", "flow"), ENTRIES)
def test_each_flow_entry_opens_its_span(entry: Any, flow: str) -> None:
    assert entry.__dict__["plugyard_flow"] == flow
