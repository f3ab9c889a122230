"""The executor: the only way any part of plugyard runs a plugin (DESIGN.md §4).

resolve plugin and operation → policy decision → (governed: approval receipt,
idempotency claim, secrets present, ``x-binding`` parameters — ``execution.governance``)
→ budget check → parameters validated → one deadline → dispatch to the runtime → output
validated → oversized output cut (full copy kept by reference) → audit event (governed:
durable, with the idempotency key completed) → result envelope.

Every outcome — an unknown plugin, bad parameters, a plugin that raises, hangs, returns
the wrong shape or too much — is a :class:`Result` with a documented error code; only
misuse of this API (parameters that are not a mapping) raises.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from plugyard.errors import CallError, PlugyardError
from plugyard.execution.host import Host, make_host
from plugyard.execution.overlay import OVERLAY, HostContext, OverlayError, split
from plugyard.execution.payloads import MemoryPayloadStore, PayloadStore
from plugyard.execution.result import Result
from plugyard.execution.validation import SchemaError, Validators, with_defaults
from plugyard.governance.audit.event import AuditEvent, AuditSink, MemoryAuditSink, params_hash
from plugyard.governance.core import Governance, Governed
from plugyard.governance.policy.base import ALLOW_ALL, AllowAll, Decision, Policy, Subject
from plugyard.manifest.model import Operation
from plugyard.manifest.nearest import close_matches, nearest
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import (
    Answer,
    CallContext,
    ErrorInfo,
    Outcome,
    Progress,
    Runtime,
    Target,
)
from plugyard.telemetry import CallSpan, CallTracer, call_tracer

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class Offload(Protocol):
    """Where operations marked ``heavy`` run instead (execution.backend: a Ray cluster)."""

    async def call(self, request: CallRequest) -> Result: ...


class PluginLookup(Protocol):
    """Where the executor finds plugins (the registry, or a test double)."""

    def find(self, plugin_id: str) -> RegisteredPlugin | None: ...


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One call: which plugin and operation, with what, for whom, within how long."""

    plugin_id: str
    operation: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    context: CallContext | None = None
    timeout_ms: int | None = None
    #: The receipt of an approved request (``pending_approval`` handed it out).
    approval_receipt: str | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    default_timeout_ms: int = 30_000
    max_output_bytes: int = 1024 * 1024
    preview_bytes: int = 4096


_ID_PREFIX = secrets.token_hex(6)
_ID_COUNTER = itertools.count(1)


def new_request_id() -> str:
    """Unique across processes (a random prefix) and cheap within one (a counter)."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER):010x}"


@dataclass(slots=True)
class _Call:
    """What the steps of one call share."""

    request: CallRequest
    context: CallContext
    started: float
    wall: float
    plugin: RegisteredPlugin | None = None
    operation: Operation | None = None
    decision: Decision | None = None
    data: Any = None
    payload_ref: str | None = None
    gov: Governed | None = None
    #: Shu's ``params.__host`` overlay, taken out of the parameters (execution.overlay)
    host_context: HostContext | None = None
    overlay_fault: OverlayError | None = None
    span: CallSpan | None = None  # the call's span, when telemetry is on


class Executor:
    """Runs operations of registered plugins under one policy."""

    def __init__(
        self,
        plugins: PluginLookup,
        runtimes: Mapping[str, Runtime],
        *,
        policy: Policy | None = None,
        audit: AuditSink | None = None,
        payloads: PayloadStore | None = None,
        limits: Limits | None = None,
        governance: Governance | None = None,
    ) -> None:
        self._plugins = plugins
        self._governance = governance
        self._runtimes = dict(runtimes)
        self._policy = policy or AllowAll()
        # `is None`, not `or`: a sink that is empty so far has len() 0 and is falsy.
        self.audit = audit if audit is not None else MemoryAuditSink()
        self._payloads = payloads or MemoryPayloadStore()
        self._limits = limits or Limits()
        self._validators = Validators()
        self._hosts: dict[tuple[str, str], Host] = {}
        self._targets: dict[tuple[str, str], Target] = {}
        self._allow_all = isinstance(self._policy, AllowAll)
        #: The backend heavy operations run on; ``None`` runs everything here. The
        #: backend's worker runs them through an executor of its own without one.
        self.offload: Offload | None = None
        #: Spans and call metrics (plugyard.telemetry); ``None`` when telemetry is off.
        self.tracer: CallTracer | None = call_tracer()

    # ----------------------------------------------------------------- public API

    async def call(self, request: CallRequest) -> Result:
        """Run one operation and answer its result envelope (progress is dropped)."""
        if self.offload is not None and self._heavy(request):
            return await self.offload.call(request)
        call = self._begin(request)
        try:
            result = self._prepare(call) or await self._run(call)
        except asyncio.CancelledError:
            self._finish_cancelled(call)
            raise
        finished = self._finish(call, result)
        if self._settle is not None:  # the audit event is durable before the result is out
            await self._settle()
        return finished

    async def stream(self, request: CallRequest) -> AsyncIterator[Progress | Result]:
        """Run one operation: progress events first (streaming operations), then the result."""
        if self.offload is not None and self._heavy(request):
            yield await self.offload.call(request)  # a heavy operation's progress stays there
            return
        call = self._begin(request)
        try:
            refusal = self._prepare(call)
            if refusal is not None:
                finished = self._finish(call, refusal)
                if self._settle is not None:
                    await self._settle()
                yield finished
                return
            result: Outcome | None = None
            async for item in self._run_streaming(call):
                if isinstance(item, Outcome):
                    result = item
                else:
                    yield item
            assert result is not None
        except asyncio.CancelledError:
            self._finish_cancelled(call)
            raise
        finished = self._finish(call, result)
        if self._settle is not None:
            await self._settle()
        yield finished

    def _heavy(self, request: CallRequest) -> bool:
        plugin = self._plugins.find(request.plugin_id)
        operation = _operation(plugin, request.operation) if plugin is not None else None
        return operation is not None and operation.heavy

    # ----------------------------------------------------------------- the steps

    def _prepare(self, call: _Call) -> Outcome | None:
        """Everything before the plugin runs; a refusal is returned, not raised."""
        request = call.request
        plugin = self._plugins.find(request.plugin_id)
        if plugin is None:
            return self._unknown_plugin(call)
        call.plugin = plugin
        operation = _operation(plugin, request.operation)
        if operation is None:
            return _unknown_operation(plugin, request.operation)
        call.operation = operation
        if call.overlay_fault is not None:
            fault = call.overlay_fault
            return _refuse("invalid_parameters", f"{fault.pointer}: {fault}",
                           errors=[{"pointer": fault.pointer, "message": str(fault)}])  # fmt: skip
        if self._allow_all:
            decision = ALLOW_ALL  # the question is trivial; skip building a Subject
        else:
            context = call.context
            subject = Subject(context.subject, context.roles, context.permissions)
            decision = self._policy.decide(subject, plugin.id, operation.id, request.params)
        call.decision = decision
        if decision.outcome == "deny":
            return _refuse("permission_denied", decision.reason)
        governance = self._governance
        if governance is not None:
            call.gov = Governed()
            admitted = governance.admit(
                plugin, operation, request.params, call.context, decision,
                request.approval_receipt, call.gov,
            )  # fmt: skip
            if admitted is not None:
                call.data = admitted.data  # a pending receipt, or a replayed result
                return admitted
        if not plugin.available:
            return _refuse("plugin_unavailable", plugin.unavailable_reason or "unavailable")
        budget = call.context.budgets.get("llm_calls")
        needed = plugin.descriptor.max_llm_calls
        if isinstance(budget, int | float) and needed is not None and needed > budget:
            return Outcome(
                status="skipped-budget",
                error=ErrorInfo("budget_exceeded", f"needs up to {needed} LLM calls", {}),
            )
        try:
            faults = self._validators.check(
                (plugin.content_hash, operation.id, "in"), operation.parameters, request.params
            )
        except SchemaError as exc:
            return _refuse("plugin_unavailable", f"parameters schema is invalid: {exc}")
        if faults:
            first = faults[0]
            return _refuse(
                "invalid_parameters",
                f"{first.pointer or '/'}: {first.message}",
                errors=[f.to_dict() for f in faults],
                schema=operation.parameters,
            )
        if call.gov is not None and governance is not None:
            return governance.commit(call.gov)  # spends what the call consumes, last
        return None

    def _unknown_plugin(self, call: _Call) -> Outcome:
        """``plugin_not_found``, naming the nearest id the caller may call — never one it
        may not (a suggestion must not reveal what a listing would hide)."""
        wanted = call.request.plugin_id
        message = f"no plugin {wanted!r}"
        ids = getattr(self._plugins, "ids", None)
        if callable(ids):
            context = call.context
            subject = Subject(context.subject, context.roles, context.permissions)
            for guess in close_matches(wanted, ids()):
                found = self._plugins.find(guess)
                if found is not None and any(
                    self._policy.decide(subject, guess, op.id, {}).outcome != "deny"
                    for op in found.descriptor.operations
                ):
                    message += f" — did you mean {guess!r}?"
                    break
        return _refuse("plugin_not_found", message)

    def _begin(self, request: CallRequest) -> _Call:
        if not isinstance(request.params, Mapping):
            raise CallError("params must be a mapping", code="invalid_request")
        context = request.context or CallContext(request_id=new_request_id())
        if OVERLAY not in request.params:
            call = _Call(request, context, time.perf_counter(), time.time())
        else:
            fault = None
            try:
                params, host_context = split(request.params)
            except OverlayError as exc:
                params, host_context, fault = dict(request.params), HostContext(), exc
            stripped = CallRequest(request.plugin_id, request.operation, params,
                                   request.context, request.timeout_ms,
                                   request.approval_receipt)  # fmt: skip
            call = _Call(stripped, context, time.perf_counter(), time.time())
            call.host_context, call.overlay_fault = host_context, fault
        if self.tracer is not None:
            call.span = self.tracer.start(request.plugin_id, request.operation, None,
                                          context.subject, context.request_id)  # fmt: skip
        return call

    def _target(self, call: _Call) -> tuple[Runtime | None, Target, Operation]:
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        runtime = self._runtimes.get(plugin.descriptor.runtime.kind)
        key = (plugin.id, plugin.content_hash)
        target = self._targets.get(key)
        if target is None or target.location != plugin.location or target.trust != plugin.trust:
            target = Target(plugin.descriptor, plugin.location, plugin.trust, plugin.content_hash)
            self._targets[key] = target
        return runtime, target, operation

    async def _run(self, call: _Call) -> Outcome:
        """Dispatch under one deadline; progress of a streaming operation is dropped.

        Kept apart from :meth:`_run_streaming` on purpose: an async generator on the
        plain path costs a task and a wake-up per call to finalise it.
        """
        runtime, target, operation = self._target(call)
        if runtime is None:
            return _no_runtime(target)
        timeout = self._timeout_s(call)
        deadline = asyncio.get_running_loop().time() + timeout
        inline = getattr(runtime, "runs_inline", None)
        # Inline code never yields, so no timer could interrupt it: judge its deadline
        # when it returns instead of arming a timer on every call.
        timed = not (inline is not None and inline(target, operation))
        try:
            if timed:
                async with asyncio.timeout_at(deadline):
                    answer = await self._invoke(runtime, target, operation, call)
            else:
                answer = await self._invoke(runtime, target, operation, call)
                if asyncio.get_running_loop().time() > deadline:
                    raise TimeoutError
            if isinstance(answer, Outcome):
                return self._check_output(call, operation, answer)
            outcome: Outcome | None = None
            async with asyncio.timeout_at(deadline):
                async for item in answer:
                    if isinstance(item, Outcome):
                        outcome = item
                        break
        except TimeoutError:
            return _refuse("timeout", f"no result within {timeout * 1000:.0f} ms")
        except PlugyardError as exc:
            return _refuse(exc.code, exc.message)
        return self._check_output(call, operation, outcome)

    def _invoke(
        self, runtime: Runtime, target: Target, operation: Operation, call: _Call
    ) -> Awaitable[Answer]:
        params = dict(call.request.params)  # the plugin may not change the caller's mapping
        gov = call.gov
        if gov is not None:
            gov.dispatched = True
            if gov.params is not None:
                params = dict(gov.params)  # with x-binding values the caller never sees
        params = with_defaults(operation.parameters, params)
        return runtime.invoke(target, operation, params, call.context, self._host(call))

    async def _run_streaming(self, call: _Call) -> AsyncIterator[Progress | Outcome]:
        runtime, target, operation = self._target(call)
        if runtime is None:
            yield _no_runtime(target)
            return
        timeout = self._timeout_s(call)
        outcome: Outcome | None = None
        try:
            async with asyncio.timeout(timeout):
                answer = await self._invoke(runtime, target, operation, call)
                if isinstance(answer, Outcome):
                    outcome = answer
                else:
                    async for item in answer:
                        if isinstance(item, Outcome):
                            outcome = item
                            break
                        yield item
        except TimeoutError:
            yield _refuse("timeout", f"no result within {timeout * 1000:.0f} ms")
            return
        except PlugyardError as exc:
            yield _refuse(exc.code, exc.message)
            return
        yield self._check_output(call, operation, outcome)

    def _check_output(self, call: _Call, operation: Operation, outcome: Outcome | None) -> Outcome:
        """Normalise, validate and size-check what the plugin produced."""
        assert call.plugin is not None
        if outcome is None:
            return _refuse("invalid_output", "the operation ended without a result")
        if not isinstance(outcome, Outcome):
            return _refuse("invalid_output", f"runtime answered {type(outcome).__name__}")
        data = outcome.data
        try:
            encoded = _encode(data)
        except (TypeError, ValueError, OverflowError) as exc:
            return _refuse("invalid_output", f"output is not JSON: {exc}")
        if not isinstance(data, str | int | float | bool | type(None)):
            # Normalise to what a client will see (tuples, sets, dataclasses → JSON), so
            # the output schema judges exactly that.
            data = _decode(encoded)
        if operation.output_schema is not None and outcome.error is None:
            try:
                faults = self._validators.check(
                    (call.plugin.content_hash, operation.id, "out"), operation.output_schema, data
                )
            except SchemaError as exc:
                return _refuse("output_validation_error", f"output schema is invalid: {exc}")
            if faults:
                return _refuse(
                    "output_validation_error",
                    f"{faults[0].pointer or '/'}: {faults[0].message}",
                    errors=[f.to_dict() for f in faults],
                )
        if len(encoded) > self._limits.max_output_bytes:
            call.payload_ref = self._payloads.put(encoded)
            preview = encoded[: self._limits.preview_bytes].decode("utf-8", "replace")
            data = {
                "x-plugyard-truncated": True,
                "bytes": len(encoded),
                "ref": call.payload_ref,
                "preview": preview,
            }
        call.data = data
        return outcome

    def _finish(self, call: _Call, outcome: Outcome) -> Result:
        """Audit the call and build its one result envelope."""
        duration_ms = (time.perf_counter() - call.started) * 1000.0
        plugin_id = call.plugin.id if call.plugin else call.request.plugin_id
        operation = call.operation.id if call.operation else call.request.operation
        decision = call.decision
        error = outcome.error
        gov = call.gov
        if call.span is not None and self.tracer is not None:
            plugin = call.plugin  # None: the name was the caller's, never resolved
            self.tracer.end(call.span, outcome.status, error.code if error else None,
                            duration_ms, plugin=plugin.id if plugin else None,
                            operation=operation if call.operation else None,
                            runtime=plugin.descriptor.runtime.kind if plugin else None)  # fmt: skip
        event = AuditEvent(
            call.context.request_id,
            call.context.subject,
            plugin_id,
            operation,
            params_hash(call.request.params),
            decision.outcome if decision else "none",
            outcome.status,
            error.code if error else None,
            call.wall,
            duration_ms,
            decision.policy_version if decision else None,
            gov.approver if gov is not None else None,
        )
        cost = dict(outcome.cost) if outcome.cost else {}
        cost["duration_ms"] = round(duration_ms, 3)
        result = Result(
            status=outcome.status,
            data=call.data,
            error=error,
            cost=cost,
            diagnostics=outcome.diagnostics if call.context.debug else (),
            skips=outcome.skips,
            citations=outcome.citations,
            next_cursor=outcome.next_cursor,
            plugin_id=plugin_id,
            operation=operation,
            request_id=call.context.request_id,
            payload_ref=call.payload_ref,
        )
        if gov is not None and self._governance is not None:
            return self._governance.conclude(gov, result, event, self.audit)
        self.audit.emit(event)
        return result

    # ----------------------------------------------------------------- helpers

    def _finish_cancelled(self, call: _Call) -> None:
        self._finish(call, _refuse("cancelled", "the caller cancelled the call"))
        flush = getattr(self.audit, "flush_pending", None)
        if flush is not None:
            flush()

    @property
    def audit(self) -> AuditSink:
        return self._audit

    @audit.setter
    def audit(self, sink: AuditSink) -> None:
        self._audit = sink
        # The sink's group-commit wait, when it batches (the durable chain); looked up
        # once here, not on every call.
        self._settle: Callable[[], Awaitable[None]] | None = getattr(sink, "settle", None)

    def _timeout_s(self, call: _Call) -> float:
        assert call.plugin is not None
        candidates = [self._limits.default_timeout_ms]
        if call.plugin.descriptor.timeout_ms:
            candidates = [call.plugin.descriptor.timeout_ms]
        if call.request.timeout_ms is not None:
            candidates.append(call.request.timeout_ms)
        return max(min(candidates), 1) / 1000.0

    def _host(self, call: _Call) -> Host:
        plugin = call.plugin
        assert plugin is not None
        key = (plugin.id, plugin.content_hash)
        host = self._hosts.get(key)
        if host is None:
            host = make_host(plugin.id, plugin.descriptor.host_capabilities)
            if self._governance is not None:
                host = host.extended(self._governance.plugin_services(plugin))
            self._hosts[key] = host
        if call.gov is not None and self._governance is not None:
            return self._governance.host_for(
                host, plugin, call.context, call.gov, call.host_context
            )
        return host


def _refuse(code: str, message: str, **details: Any) -> Outcome:
    """A refusal by the call path itself (not by the plugin)."""
    status = "timeout" if code == "timeout" else "error"
    return Outcome(status=status, error=ErrorInfo(code, message, details))


def _unknown_operation(plugin: RegisteredPlugin, name: str | None) -> Outcome:
    names = [op.id for op in plugin.descriptor.operations]
    listed = ", ".join(names)
    if name is None:
        message = f"plugin {plugin.id!r} has several operations: {listed} — name one"
    else:
        guess = nearest(name, names)
        hint = f" — did you mean {guess!r}?" if guess else f" (it has: {listed})"
        message = f"plugin {plugin.id!r} has no operation {name!r}{hint}"
    return _refuse("operation_not_found", message, operations=names)


def _no_runtime(target: Target) -> Outcome:
    kind = target.descriptor.runtime.kind
    return _refuse("plugin_unavailable", f"no {kind!r} runtime on this host")


def _operation(plugin: RegisteredPlugin, name: str | None) -> Operation | None:
    operations = plugin.descriptor.operations
    if name is None:
        return operations[0] if len(operations) == 1 else None
    for op in operations:
        if op.id == name:
            return op
    normalised = name.lower().replace("-", "_").replace(" ", "_")
    return next((op for op in operations if op.id.lower() == normalised), None)
