"""The call path: every outcome is an envelope with a documented code, and the executor
keeps serving."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from plugyard.errors import CallError
from plugyard.execution.executor import CallRequest, Executor, Limits
from plugyard.execution.result import Result
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.policy.base import Decision
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext, Outcome, Progress
from plugyard.store.audit import SqlAuditRepository
from plugyard.store.store import Store
from plugyard.types import Caller
from plugyard.yard.steps import call_path

from .conftest import FunctionRuntime, Table, descriptor

ADD = Operation(
    id="add",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    output_schema={"type": "number"},
)


@pytest.fixture
def executor(table: Table, runtime: FunctionRuntime) -> Executor:
    table.add(descriptor("math", ADD))
    runtime.functions[("math", "add")] = lambda a, b: a + b
    return Executor(table, {"python": runtime})


def call(executor: Executor, plugin: str = "math", op: str | None = "add", **kw: Any) -> Result:
    return asyncio.run(executor.call(CallRequest(plugin, op, **kw)))


def test_a_call_returns_the_envelope_with_data_and_duration(executor: Executor) -> None:
    result = call(executor, params={"a": 2, "b": 3})
    assert result.status == "success"
    assert result.data == 5
    assert result.plugin_id == "math"
    assert result.operation == "add"
    assert result.cost["duration_ms"] >= 0
    envelope = result.to_dict()
    assert envelope["status"] == "success"
    assert "error" not in envelope


def test_single_operation_is_chosen_when_none_is_named(executor: Executor) -> None:
    assert call(executor, op=None, params={"a": 1, "b": 1}).data == 2


def test_operation_names_are_matched_like_homeclaw_does(executor: Executor) -> None:
    assert call(executor, op="ADD", params={"a": 1, "b": 1}).data == 2


def test_unknown_plugin_is_plugin_not_found(executor: Executor) -> None:
    result = call(executor, plugin="nope")
    assert result.error is not None
    assert result.error.code == "plugin_not_found"


def test_unknown_operation_lists_the_operations(executor: Executor) -> None:
    result = call(executor, op="mul")
    assert result.error is not None
    assert result.error.code == "operation_not_found"
    assert result.error.details["operations"] == ["add"]


def test_invalid_parameters_name_the_field_and_echo_the_schema(executor: Executor) -> None:
    result = call(executor, params={"a": "two", "b": 3})
    assert result.error is not None
    assert result.error.code == "invalid_parameters"
    assert result.error.details["errors"][0]["pointer"] == "/a"
    assert result.error.details["schema"] == ADD.parameters


def test_missing_and_extra_parameters_are_all_reported(executor: Executor) -> None:
    result = call(executor, params={"a": 1, "c": 2})
    assert result.error is not None
    assert len(result.error.details["errors"]) == 2


def test_formats_are_checked(table: Table, runtime: FunctionRuntime) -> None:
    op = Operation(
        id="send",
        parameters={"type": "object", "properties": {"to": {"type": "string", "format": "email"}}},
    )
    table.add(descriptor("mail", op))
    runtime.functions[("mail", "send")] = lambda to: to
    executor = Executor(table, {"python": runtime})
    assert call(executor, "mail", "send", params={"to": "a@b.example"}).ok
    bad = call(executor, "mail", "send", params={"to": "not an address"})
    assert bad.error is not None
    assert bad.error.code == "invalid_parameters"


def test_draft_7_schemas_are_honoured(table: Table, runtime: FunctionRuntime) -> None:
    op = Operation(
        id="x",
        parameters={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMaximum": 5}},
        },
    )
    table.add(descriptor("d7", op))
    runtime.functions[("d7", "x")] = lambda n: n
    executor = Executor(table, {"python": runtime})
    assert call(executor, "d7", "x", params={"n": 4}).ok
    assert not call(executor, "d7", "x", params={"n": 5}).ok


def test_a_plugin_that_raises_is_plugin_error(executor: Executor, runtime: FunctionRuntime) -> None:
    runtime.functions[("math", "add")] = lambda a, b: 1 / 0
    result = call(executor, params={"a": 1, "b": 0})
    assert result.status == "error"
    assert result.error is not None
    assert result.error.code == "plugin_error"


def test_a_plugin_that_hangs_times_out_and_the_executor_keeps_serving(
    executor: Executor, runtime: FunctionRuntime
) -> None:
    async def hang(a: float, b: float) -> float:
        await asyncio.Event().wait()
        return a + b

    runtime.functions[("math", "add")] = hang
    result = call(executor, params={"a": 1, "b": 2}, timeout_ms=20)
    assert result.status == "timeout"
    assert result.error is not None
    assert result.error.code == "timeout"
    runtime.functions[("math", "add")] = lambda a, b: a + b
    assert call(executor, params={"a": 1, "b": 2}).data == 3


def test_the_shorter_of_caller_and_plugin_timeout_wins(
    table: Table, runtime: FunctionRuntime
) -> None:
    table.add(descriptor("slow", ADD, timeout_ms=10))

    async def hang(a: float, b: float) -> float:
        await asyncio.Event().wait()
        return a

    runtime.functions[("slow", "add")] = hang
    executor = Executor(table, {"python": runtime})
    assert call(executor, "slow", params={"a": 1, "b": 2}, timeout_ms=60_000).status == "timeout"


def test_wrong_output_shape_is_output_validation_error(
    executor: Executor, runtime: FunctionRuntime
) -> None:
    runtime.functions[("math", "add")] = lambda a, b: "five"
    result = call(executor, params={"a": 2, "b": 3})
    assert result.status == "error"
    assert result.error is not None
    assert result.error.code == "output_validation_error"


def test_output_that_is_not_json_is_invalid_output(
    executor: Executor, runtime: FunctionRuntime
) -> None:
    runtime.functions[("math", "add")] = lambda a, b: object()
    result = call(executor, params={"a": 2, "b": 3})
    assert result.error is not None
    assert result.error.code == "invalid_output"


def test_output_is_normalised_to_json_before_its_schema_judges_it(
    table: Table, runtime: FunctionRuntime
) -> None:
    op = Operation(id="pair", output_schema={"type": "array", "items": {"type": "integer"}})
    table.add(descriptor("pairs", op))
    runtime.functions[("pairs", "pair")] = lambda: (1, 2)
    executor = Executor(table, {"python": runtime})
    result = call(executor, "pairs", "pair")
    assert result.ok
    assert result.data == [1, 2]


def test_oversized_output_is_cut_and_kept_by_reference(
    table: Table, runtime: FunctionRuntime
) -> None:
    table.add(descriptor("big", Operation(id="dump")))
    runtime.functions[("big", "dump")] = lambda: "x" * 5000
    executor = Executor(table, {"python": runtime}, limits=Limits(max_output_bytes=1000))
    result = call(executor, "big", "dump")
    assert result.ok
    assert result.data["x-plugyard-truncated"] is True
    assert result.payload_ref is not None
    stored = executor._payloads.get(result.payload_ref)
    assert stored is not None
    assert len(stored) == 5002  # the JSON string, quotes included


def test_unavailable_plugin_answers_fast_with_its_reason(
    table: Table, runtime: FunctionRuntime
) -> None:
    table.add(descriptor("gone", ADD), available=False, unavailable_reason="import failed")
    executor = Executor(table, {"python": runtime})
    result = call(executor, "gone", params={"a": 1, "b": 2})
    assert result.error is not None
    assert result.error.code == "plugin_unavailable"
    assert result.error.message == "import failed"


def test_a_runtime_kind_the_host_lacks_is_plugin_unavailable(table: Table) -> None:
    table.add(descriptor("py", ADD))
    executor = Executor(table, {})
    result = call(executor, "py", params={"a": 1, "b": 2})
    assert result.error is not None
    assert result.error.code == "plugin_unavailable"


def test_the_policy_is_asked_and_deny_stops_the_call(
    table: Table, runtime: FunctionRuntime
) -> None:
    asked: list[tuple[str | None, str, str]] = []

    class Deny:
        def decide(self, subject: Caller, plugin_id: str, operation: str, params: Any) -> Decision:
            asked.append((subject.subject, plugin_id, operation))
            return Decision("deny", "not for you", "v1")

    table.add(descriptor("math", ADD))
    ran: list[int] = []
    runtime.functions[("math", "add")] = lambda a, b: ran.append(1)
    executor = Executor(table, {"python": runtime}, steps=call_path(table, policy=Deny()))
    ctx = CallContext(request_id="r1", subject="alice")
    result = call(executor, params={"a": 1, "b": 2}, context=ctx)
    assert result.error is not None
    assert result.error.code == "permission_denied"
    assert asked == [("alice", "math", "add")]
    assert ran == []


def test_budget_below_max_llm_calls_skips_the_plugin(
    table: Table, runtime: FunctionRuntime
) -> None:
    table.add(descriptor("llm", ADD, max_llm_calls=3))
    runtime.functions[("llm", "add")] = lambda a, b: a + b
    executor = Executor(table, {"python": runtime})
    ctx = CallContext(request_id="r", budgets={"llm_calls": 1})
    result = call(executor, "llm", params={"a": 1, "b": 2}, context=ctx)
    assert result.status == "skipped-budget"
    assert result.error is not None
    assert result.error.code == "budget_exceeded"


def audited(executor: Executor, table: Table) -> ChainedAudit:
    """``executor`` with an audit step (the chain on an in-memory store) around its call
    path."""
    sink = ChainedAudit(SqlAuditRepository(Store.open(":memory:")), b"k" * 32)
    executor.steps = call_path(table, audit=sink)
    return sink


def test_every_call_leaves_one_audit_event_without_the_parameters(
    executor: Executor, table: Table
) -> None:
    sink = audited(executor, table)
    call(executor, params={"a": 1, "b": 2})
    call(executor, plugin="nope")
    events = list(sink)
    assert [(e.plugin_id, e.status, e.error_code) for e in events] == [
        ("math", "success", None),
        ("nope", "error", "plugin_not_found"),
    ]
    assert len(events[0].params_hash) == 64
    assert "1" not in events[0].params_hash[:0]  # the hash, never the values


def test_params_hash_is_canonical() -> None:
    from plugyard.governance.audit.event import params_hash

    assert params_hash({"b": 1, "a": [1, 2]}) == params_hash({"a": [1, 2], "b": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})


def test_streaming_yields_progress_then_the_result(table: Table, runtime: FunctionRuntime) -> None:
    async def count(n: int) -> AsyncIterator[Progress | Outcome]:
        for i in range(n):
            yield Progress(message=f"step {i}", percent=(i + 1) / n * 100)
        yield Outcome(data={"counted": n})

    op = Operation(id="count", streaming=True)
    table.add(descriptor("counter", op))
    runtime.functions[("counter", "count")] = count
    executor = Executor(table, {"python": runtime})

    async def collect() -> list[Progress | Result]:
        return [item async for item in executor.stream(CallRequest("counter", params={"n": 3}))]

    items = asyncio.run(collect())
    assert [type(i).__name__ for i in items] == ["Progress", "Progress", "Progress", "Result"]
    final = items[-1]
    assert isinstance(final, Result)
    assert final.data == {"counted": 3}


def test_cancellation_reaches_the_plugin_and_is_audited(
    executor: Executor, runtime: FunctionRuntime, table: Table
) -> None:
    sink = audited(executor, table)
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def wait(a: float, b: float) -> float:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return a

    runtime.functions[("math", "add")] = wait

    async def scenario() -> None:
        task = asyncio.create_task(executor.call(CallRequest("math", "add", {"a": 1, "b": 2})))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cancelled.is_set()

    asyncio.run(scenario())
    assert [e.error_code for e in sink] == ["cancelled"]


def test_params_that_are_not_a_mapping_are_misuse(executor: Executor) -> None:
    with pytest.raises(CallError) as info:
        call(executor, params=[1, 2])  # type: ignore[arg-type]
    assert info.value.code == "invalid_request"


def test_debug_keeps_diagnostics_otherwise_they_are_dropped(
    executor: Executor, runtime: FunctionRuntime
) -> None:
    runtime.functions[("math", "add")] = lambda a, b: Outcome(data=a + b, diagnostics=("slow",))
    assert call(executor, params={"a": 1, "b": 2}).diagnostics == ()
    ctx = CallContext(request_id="r", debug=True)
    assert call(executor, params={"a": 1, "b": 2}, context=ctx).diagnostics == ("slow",)


def test_family_statuses_pass_through(table: Table, runtime: FunctionRuntime) -> None:
    table.add(descriptor("kb", Operation(id="retrieve")))
    runtime.functions[("kb", "retrieve")] = lambda: Outcome(status="insufficient", data={})
    executor = Executor(table, {"python": runtime})
    result = call(executor, "kb", "retrieve")
    assert result.status == "insufficient"
    assert result.ok


def test_inline_code_past_its_deadline_answers_timeout() -> None:
    import time

    from plugyard.registry.model import RegisteredPlugin
    from plugyard.runtimes.python import InProcessRuntime, definition_of, tool

    @tool(id="busy", inline=True)
    def spin(ms: int) -> int:
        """Keep the CPU busy.

        Args:
            ms: How long.
        """
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            pass
        return ms

    definition = definition_of(spin)
    assert definition is not None
    registered = RegisteredPlugin.of(definition.descriptor, "code")
    runtime = InProcessRuntime()
    runtime.provide(spin)
    table = Table()
    table.plugins[registered.id] = registered
    executor = Executor(table, {"python": runtime})
    assert call(executor, "busy", "spin", params={"ms": 1}, timeout_ms=1000).ok
    late = call(executor, "busy", "spin", params={"ms": 30}, timeout_ms=5)
    assert late.status == "timeout"


def test_a_left_out_parameter_gets_its_declared_default(
    table: Table, runtime: FunctionRuntime
) -> None:
    greet = Operation(
        id="greet",
        parameters={
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "style": {"type": "string", "default": "short"},
                "tags": {"type": "array", "default": ["a"]},
                "note": {"type": ["string", "null"], "default": "kept"},
            },
            "required": ["name"],
        },
    )
    table.add(descriptor("hello", greet))
    seen: list[dict[str, Any]] = []
    runtime.functions[("hello", "greet")] = lambda **kw: seen.append(kw) or "ok"
    executor = Executor(table, {"python": runtime})
    assert call(executor, "hello", "greet", params={"name": "ana", "note": None}).status == (
        "success"
    )
    # the default fills what was left out; a value given (even null) is kept
    assert seen == [{"name": "ana", "style": "short", "tags": ["a"], "note": None}]
