"""The audit step: the outermost step of the call path, so its ``after`` sees every
call's final result — refused by any step, failed in a user's step, run, replayed or
cancelled — and writes one event for it (with the idempotency completion, in the same
transaction, when the sink is the hash chain)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from plugyard.execution.result import Result
from plugyard.execution.steps import NOTHING, Call
from plugyard.governance.approvals import APPROVER
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.audit.event import AuditEvent, AuditSink, params_hash
from plugyard.governance.idempotency import COMPLETION, DETAIL
from plugyard.governance.policy.step import decision_of


class AuditStep:
    name = "audit"
    before = NOTHING

    def __init__(self, sink: AuditSink) -> None:
        self.sink = sink
        self._chain = sink if isinstance(sink, ChainedAudit) else None
        #: the sink's group-commit wait, when it batches: the executor awaits it before
        #: the result goes out, so the event is durable first
        self.settle: Callable[[], Awaitable[None]] | None = getattr(sink, "settle", None)
        self._flush: Callable[[], Any] | None = getattr(sink, "flush_pending", None)

    def after(self, call: Call, result: Result) -> Result:
        state = call.state
        decision = decision_of(call)
        error = result.error
        event = AuditEvent(
            call.context.request_id,
            call.context.subject,
            result.plugin_id or call.plugin_id,
            result.operation,
            params_hash(call.request_params),
            decision.outcome if decision else "none",
            result.status,
            error.code if error else None,
            call.wall,
            (time.perf_counter() - call.started) * 1000.0,
            decision.policy_version if decision else None,
            state.get(APPROVER),
            state.get(DETAIL),
        )
        completion = state.get(COMPLETION)
        if self._chain is not None:  # the completion commits with the event
            self._chain.emit(event, completion)
        else:
            self.sink.emit(event)
            if completion is not None:
                completion(None)
        if error is not None and error.code == "cancelled" and self._flush is not None:
            self._flush()  # a cancelled caller awaits nothing more: write it now
        return result


def backend_audit(sink: AuditSink) -> Callable[[Any, Result, float], Awaitable[None]]:
    """How an execution backend audits a call it could not hand to a worker (the worker
    audits every call it ran): one event, durable before the caller hears of it."""
    settle: Callable[[], Awaitable[None]] | None = getattr(sink, "settle", None)

    async def audit(request: Any, result: Result, started: float) -> None:
        context = request.context
        error = result.error
        sink.emit(
            AuditEvent(
                context.request_id, context.subject, request.plugin_id, request.operation,
                params_hash(request.params), "none", result.status,
                error.code if error else None, started, (time.time() - started) * 1000,
            )
        )  # fmt: skip
        if settle is not None:
            await settle()

    return audit
