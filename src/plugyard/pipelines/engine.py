"""The engine: a plain asyncio loop that runs a validated plan on a context.

Capabilities run in order, each a flow of steps; a context (a JSON object) flows
through them. Every plugin — stage, condition, iterator, fork, join, fallback — is an
:meth:`Executor.call <plugyard.execution.executor.Executor.call>` carrying the run's
request id and subject, so it gets the executor's validation, deadline, policy and
audit. The whole run has one deadline; each call gets what is left of it.

The calls of ASYNC branches and of iterations go to the run's *fan-out* caller — the
same executor by default, or an execution backend that runs each as a Ray task
(:mod:`plugyard.execution.backend`); everything else — stages outside groups, the
group's own condition, iterator, fork and join — runs here.

A failure follows its call's policy: ``stop`` ends the run (or the group whose
``on_error`` is ``skip``), ``skip`` goes on without it, ``fallback`` calls the named
plugin in its place. Cancelling the run cancels every branch. The engine keeps no
state between runs: each run gets its own copy of its input and its own trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.pipelines import control
from plugyard.pipelines.groups import FANNED, GroupRunner
from plugyard.pipelines.plan import Call, Group, PipelinePlan, Plan, Ref, Step
from plugyard.pipelines.signals import DeadlineExceeded, Skipped, Stopped
from plugyard.pipelines.trace import Kind, PipelineRun, RunStatus, Span, Status, Trace
from plugyard.runtimes.base import CallContext
from plugyard.telemetry import traced

DEFAULT_TIMEOUT_MS = 30_000


class Caller(Protocol):
    """The executor, as the engine sees it."""

    async def call(self, request: CallRequest) -> Result: ...


class Engine:
    """Runs plans through a caller (the executor). Stateless between runs."""

    def __init__(
        self,
        caller: Caller,
        *,
        sink: Callable[[PipelineRun], None] | None = None,
        fanout: Caller | None = None,
    ):
        self.caller = caller
        self.sink = sink
        self.fanout = fanout or caller

    @traced("pipeline.run")  # the parent span of its calls (docs/telemetry.md)
    async def run(
        self,
        plan: Plan,
        input: Mapping[str, Any],
        *,
        pipeline: str | None = None,
        context: CallContext | None = None,
        timeout_ms: int | None = None,
        stored: Mapping[str, Any] | None = None,
    ) -> PipelineRun:
        """Run one pipeline of ``plan`` on a copy of ``input``; the run keeps its trace
        whatever happens. Cancelling the caller's task cancels the run (re-raised).
        ``stored``: what the run records of the stored document it runs."""
        chosen = plan.pipeline(pipeline)
        run_id = new_request_id()
        call_context = context or CallContext(request_id=run_id)
        budget = timeout_ms or chosen.timeout_ms or DEFAULT_TIMEOUT_MS
        state = _Run(self.caller, plan, call_context, time.monotonic() + budget / 1000)
        state.fanout = self.fanout
        values: dict[str, Any] = control.copy(dict(input))
        status: RunStatus = "success"
        error = None
        started = PipelineRun(run_id, chosen.name, status, {}, (), call_context.request_id,
                              stored=dict(stored) if stored is not None else None)  # fmt: skip
        try:
            async with asyncio.timeout(budget / 1000):
                await state.pipeline(chosen, values, None)
        except Stopped as stop:
            status = "timeout" if stop.info["code"] == "timeout" else "error"
            error = stop.info
        except (TimeoutError, DeadlineExceeded):
            status = "timeout"
            message = f"the pipeline did not finish within {budget} ms"
            error = {"code": "timeout", "message": message, "path": chosen.pointer}
        except asyncio.CancelledError:
            self._finish(started, state, "cancelled", values, _cancelled(chosen))
            raise
        return self._finish(started, state, status, values, error)

    def _finish(
        self,
        started: PipelineRun,
        state: _Run,
        status: RunStatus,
        values: dict[str, Any],
        error: dict[str, Any] | None,
    ) -> PipelineRun:
        unfinished: Status = "timeout" if status == "timeout" else "cancelled"
        duration = round((time.perf_counter() - state.trace.t0) * 1000, 3)
        run = replace(
            started,
            status=status,
            context=values,
            trace=state.trace.entries(unfinished),
            subject=state.context.subject,
            error=error,
            duration_ms=duration,
        )
        if self.sink is not None:
            self.sink(run)
        return run


def _cancelled(plan: PipelinePlan) -> dict[str, Any]:
    return {"code": "cancelled", "message": "the run was cancelled", "path": plan.pointer}


class _Run(GroupRunner):
    """The state of one run."""

    def __init__(self, caller: Caller, plan: Plan, context: CallContext, deadline: float):
        self.caller = caller
        self.fanout = caller
        self.plan = plan
        self.context = context
        self.deadline = deadline
        self.trace = Trace()

    async def pipeline(
        self, plan: PipelinePlan, values: dict[str, Any], parent: int | None
    ) -> None:
        for capability in plan.capabilities:
            span = self.trace.open("capability", capability.pointer, capability.name, parent)
            try:
                await self.steps(capability.steps, values, span.seq)
            except Stopped as stop:
                self.trace.close(span, "error", error=stop.info)
                raise
            self.trace.close(span, "success")

    async def steps(self, steps: tuple[Step, ...], values: dict[str, Any], parent: int) -> None:
        for step in steps:
            await self.step(step, values, parent)

    async def step(self, step: Step, values: dict[str, Any], parent: int) -> None:
        if isinstance(step, Call):
            with contextlib.suppress(Skipped):
                await self.call(step, values, parent, "stage")
        elif isinstance(step, Group):
            await self.group(step, values, parent)
        else:
            await self.reference(step, values, parent)

    async def reference(self, ref: Ref, values: dict[str, Any], parent: int) -> None:
        span = self.trace.open("pipeline", ref.pointer, ref.pipeline, parent)
        try:
            await self.pipeline(self.plan.pipelines[ref.pipeline], values, span.seq)
        except Stopped as stop:
            self.trace.close(span, "error", error=stop.info)
            raise
        self.trace.close(span, "success")

    async def call(
        self,
        call: Call,
        values: dict[str, Any],
        parent: int,
        kind: Kind,
        extra: Mapping[str, Any] | None = None,
        read: Callable[[Any], Any] | None = None,
    ) -> Any:
        """One executor call; answers its data (read by ``read`` for a control plugin)."""
        span = self.trace.open(kind, call.pointer, call.node_id, parent, plugin=call.plugin_id)
        try:
            caller = self.fanout if FANNED.get() else self.caller
            result = await caller.call(self.request(call, values, extra))
        except asyncio.CancelledError:
            self.trace.close(span, "timeout" if self.expired() else "cancelled")
            raise
        if result.ok:
            try:
                data = read(result.data) if read is not None else result.data
            except control.BadAnswer as exc:
                bad = str(exc)
                return await self.call_failed(
                    call, values, span, "invalid_output", bad, extra, read
                )
            call.output.apply(values, result.data, call.node_id)
            self.trace.close(span, "success", output_bytes=control.size(result.data))
            return data
        error = result.error
        code = error.code if error else result.status
        message = error.message if error else f"status {result.status}"
        return await self.call_failed(call, values, span, code, message, extra, read)

    async def call_failed(
        self,
        call: Call,
        values: dict[str, Any],
        span: Span,
        code: str,
        message: str,
        extra: Mapping[str, Any] | None,
        read: Callable[[Any], Any] | None,
    ) -> Any:
        info = {"code": code, "message": message}
        status: Status = "timeout" if code == "timeout" else "error"
        if call.on_error == "skip":
            self.trace.close(span, status, error=info, note="skipped by policy")
            raise Skipped
        if call.on_error == "fallback" and call.fallback is not None:
            self.trace.close(span, status, error=info, note="replaced by its fallback")
            kind: Kind = "fallback"
            return await self.call(call.fallback, values, span.seq, kind, extra, read)
        self.trace.close(span, status, error=info)
        raise Stopped(code, message, call.pointer)

    def request(
        self, call: Call, values: dict[str, Any], extra: Mapping[str, Any] | None
    ) -> CallRequest:
        left_ms = (self.deadline - time.monotonic()) * 1000
        if left_ms <= 0:
            raise DeadlineExceeded
        timeout = int(left_ms) + 1 if call.timeout_ms is None else min(call.timeout_ms, left_ms)
        return CallRequest(
            call.plugin_id,
            call.operation,
            control.params(call, values, extra),
            self.context,
            max(int(timeout), 1),
        )

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline
