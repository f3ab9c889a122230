"""The executor runs a list of steps: ``before`` in order (a refusal stops the rest and
the plugin), ``after`` in reverse for every step whose ``before`` ran."""

from __future__ import annotations

import asyncio
from typing import Any

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.execution.steps import NOTHING, Call, StepBase, StepView, guarded
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome
from plugyard.yard.steps import Placement, with_step

from .conftest import FunctionRuntime, Table, descriptor

ADD = Operation(
    id="add",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
)


class Recorder:
    """A step that writes down when its hooks run, and may refuse."""

    def __init__(self, name: str, seen: list[str], refuse: bool = False) -> None:
        self.name, self.seen, self.refuse = name, seen, refuse

    def before(self, call: Call) -> Outcome | None:
        self.seen.append(f"{self.name}.before")
        if self.refuse:
            return Outcome(status="error", error=ErrorInfo("permission_denied", "no", {}))
        return None

    def after(self, call: Call, result: Result) -> Result:
        self.seen.append(f"{self.name}.after")
        return result


def setup(table: Table, runtime: FunctionRuntime, ran: list[Any]) -> Executor:
    table.add(descriptor("math", ADD))

    def add(a: float, b: float) -> float:
        ran.append((a, b))
        return a + b

    runtime.functions[("math", "add")] = add
    return Executor(table, {"python": runtime})


def run(executor: Executor, params: dict[str, Any]) -> Result:
    context = CallContext("r1", subject="alice")
    return asyncio.run(executor.call(CallRequest("math", "add", params, context)))


def test_after_hooks_run_in_reverse_for_the_steps_entered(
    table: Table, runtime: FunctionRuntime
) -> None:
    ran: list[Any] = []
    executor = setup(table, runtime, ran)
    seen: list[str] = []
    executor.steps = [Recorder("outer", seen), *executor.steps, Recorder("inner", seen)]
    assert run(executor, {"a": 1, "b": 2}).data == 3
    assert seen == ["outer.before", "inner.before", "inner.after", "outer.after"]


def test_a_refusal_stops_later_steps_and_the_plugin(table: Table, runtime: FunctionRuntime) -> None:
    ran: list[Any] = []
    executor = setup(table, runtime, ran)
    seen: list[str] = []
    executor.steps = [Recorder("outer", seen), Recorder("gate", seen, refuse=True),
                      Recorder("inner", seen), *executor.steps]  # fmt: skip
    result = run(executor, {"a": 1, "b": 2})
    assert result.error is not None and result.error.code == "permission_denied"
    assert seen == ["outer.before", "gate.before", "gate.after", "outer.after"]
    assert ran == []


def test_a_hook_marked_nothing_is_never_called(table: Table, runtime: FunctionRuntime) -> None:
    ran: list[Any] = []
    executor = setup(table, runtime, ran)
    seen: list[str] = []
    closing = Recorder("closing", seen)
    closing.before = NOTHING  # type: ignore[method-assign]
    executor.steps = [closing, *executor.steps]
    run(executor, {"a": 1, "b": 2})
    assert seen == ["closing.after"]


def test_a_step_keeps_per_call_state_from_before_to_after(
    table: Table, runtime: FunctionRuntime
) -> None:
    class Span(StepBase):
        name = "span"
        ended: list[tuple[str, str | None, str]] = []

        def before(self, call: StepView) -> Outcome | None:
            call.state["span"] = f"span-{call.request_id}"
            return None

        def after(self, call: StepView, result: Result) -> Result:
            self.ended.append((call.state["span"], call.operation, result.status))
            return result

    executor = setup(table, runtime, [])
    executor.steps = with_step(executor.steps, Placement(Span()))
    run(executor, {"a": 1, "b": 2})
    assert Span.ended == [("span-r1", "add", "success")]


def test_arguments_rewritten_by_a_step_are_the_ones_validated_and_sent(
    table: Table, runtime: FunctionRuntime
) -> None:
    class Strings(StepBase):
        name = "numbers"

        def before(self, call: StepView) -> Outcome | None:
            call.arguments = {k: float(v) for k, v in call.arguments.items()}
            return None

    ran: list[Any] = []
    executor = setup(table, runtime, ran)
    assert run(executor, {"a": "1", "b": "2"}).error.code == "invalid_parameters"  # type: ignore[union-attr]
    executor.steps = with_step(executor.steps, Placement(Strings()))
    assert run(executor, {"a": "1", "b": "2"}).data == 3.0
    assert ran == [(1.0, 2.0)]


def test_a_step_that_raises_or_answers_nonsense_fails_the_call_with_step_failed(
    table: Table, runtime: FunctionRuntime
) -> None:
    class Broken(StepBase):
        name = "broken"

        def before(self, call: StepView) -> Outcome | None:
            raise KeyError("tenant")

    class Nonsense(StepBase):
        name = "nonsense"

        def after(self, call: StepView, result: Result) -> Result:
            return "fine"  # type: ignore[return-value]

    ran: list[Any] = []
    executor = setup(table, runtime, ran)
    bare = executor.steps
    executor.steps = [guarded(Broken()), *bare]
    failed = run(executor, {"a": 1, "b": 2})
    assert failed.error is not None and failed.error.code == "step_failed"
    assert failed.error.details == {"step": "broken", "hook": "before"}
    assert ran == []
    executor.steps = [guarded(Nonsense()), *bare]
    odd = run(executor, {"a": 1, "b": 2})
    assert odd.error is not None and odd.error.code == "step_failed"
    assert odd.error.details == {"step": "nonsense", "hook": "after"}
    assert odd.plugin_id == "math" and odd.request_id == "r1"


def test_a_step_view_shows_the_call_not_the_internals(
    table: Table, runtime: FunctionRuntime
) -> None:
    seen: dict[str, Any] = {}

    class Look(StepBase):
        name = "look"

        def before(self, call: StepView) -> Outcome | None:
            seen.update(plugin=call.plugin_id, op=call.operation, args=dict(call.arguments),
                        subject=call.subject, request=call.request_id,
                        public={n for n in dir(call) if not n.startswith("_")})  # fmt: skip
            return None

    executor = setup(table, runtime, [])
    executor.steps = with_step(executor.steps, Placement(Look()))
    run(executor, {"a": 1, "b": 2})
    assert seen["plugin"] == "math" and seen["op"] == "add" and seen["subject"] == "alice"
    assert seen["args"] == {"a": 1, "b": 2} and seen["request"] == "r1"
    assert seen["public"] == {"plugin_id", "operation", "arguments", "subject", "roles",
                              "request_id", "state"}  # fmt: skip
