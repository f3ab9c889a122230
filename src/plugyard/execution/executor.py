"""The executor: the only way any part of plugyard runs a plugin (DESIGN.md §4).

It runs an ordered list of steps (:mod:`plugyard.execution.steps`) around the runtime:
every step's ``before`` in order (any may refuse), then — unless one refused — dispatch
under one deadline, the output validated and an oversized one cut (full copy kept by
reference), then the result envelope through every entered step's ``after`` in reverse
order. Which steps, in which order, the composition root decides: a bare yard runs
``resolve → budget → validate``; a governed one adds policy, approvals, idempotency,
secrets, identities, bindings, the host services and, on the way out, scrub → complete →
audit (``plugyard.yard.steps``).

Every outcome — an unknown plugin, bad parameters, a plugin that raises, hangs, returns
the wrong shape or too much — is a :class:`Result` with a documented error code; only
misuse of this API (parameters that are not a mapping) raises.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from plugyard.errors import CallError, PlugyardError
from plugyard.execution.host import Host, make_host
from plugyard.execution.overlay import OVERLAY, HostContext, OverlayError, split
from plugyard.execution.payloads import MemoryPayloadStore, PayloadStore
from plugyard.execution.result import Result
from plugyard.execution.steps import (
    UNSET,
    Budget,
    Call,
    PluginLookup,
    Resolve,
    Step,
    Validate,
    compile_steps,
    find_operation,
    refuse,
    traced_steps,
)
from plugyard.execution.validation import SchemaError, Validators, with_defaults
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import Answer, CallContext, Outcome, Progress, Runtime, Target

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

__all__ = ["CallRequest", "Executor", "Limits", "PluginLookup", "new_request_id"]


class Offload(Protocol):
    """Where operations marked ``heavy`` run instead (execution.backend: a Ray cluster)."""

    async def call(self, request: CallRequest) -> Result: ...


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


def core_steps(plugins: PluginLookup, validators: Validators | None = None) -> list[Step]:
    """The steps of a bare yard: the plugin and operation, availability and budget, the
    parameters."""
    return traced_steps([Resolve(plugins), Budget(), Validate(validators or Validators())])


class Executor:
    """Runs operations of registered plugins through one list of steps."""

    def __init__(
        self,
        plugins: PluginLookup,
        runtimes: Mapping[str, Runtime],
        *,
        steps: Sequence[Step] | None = None,
        payloads: PayloadStore | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._plugins = plugins
        self._runtimes = dict(runtimes)
        self._payloads = payloads or MemoryPayloadStore()
        self._limits = limits or Limits()
        self._validators = Validators()
        self._hosts: dict[tuple[str, str], Host] = {}
        self._targets: dict[tuple[str, str], Target] = {}
        self.steps = core_steps(plugins, self._validators) if steps is None else steps
        #: The backend heavy operations run on; ``None`` runs everything here. The
        #: backend's worker runs them through an executor of its own without one.
        self.offload: Offload | None = None

    @property
    def steps(self) -> list[Step]:
        """The call path, outermost first (a copy: set the property to change it)."""
        return list(self._steps)

    @steps.setter
    def steps(self, steps: Sequence[Step]) -> None:
        compiled = compile_steps(steps)
        self._steps = tuple(steps)
        self._befores = compiled.befores
        self._afters = compiled.afters
        self._settles = compiled.settles

    @property
    def step_names(self) -> tuple[str, ...]:
        """The order of the call path, as data (outermost first)."""
        return tuple(s.name for s in self._steps)

    # ----------------------------------------------------------------- public API

    async def call(self, request: CallRequest) -> Result:
        """Run one operation and answer its result envelope (progress is dropped)."""
        if self.offload is not None and self._heavy(request):
            return await self.offload.call(request)
        call = self._begin(request)
        outcome, afters = self._enter(call)
        if outcome is None:
            try:
                outcome = await self._run(call)
            except asyncio.CancelledError:
                self._unwind(call, refuse("cancelled", "the caller cancelled the call"), afters)
                raise
        result = self._unwind(call, outcome, afters)
        for settle in self._settles:  # e.g. the audit event is durable before the result
            await settle()
        return result

    async def stream(self, request: CallRequest) -> AsyncIterator[Progress | Result]:
        """Run one operation: progress events first (streaming operations), then the result."""
        if self.offload is not None and self._heavy(request):
            yield await self.offload.call(request)  # a heavy operation's progress stays there
            return
        call = self._begin(request)
        outcome, afters = self._enter(call)
        if outcome is None:
            try:
                async for item in self._run_streaming(call):
                    if isinstance(item, Outcome):
                        outcome = item
                    else:
                        yield item
            except asyncio.CancelledError:
                self._unwind(call, refuse("cancelled", "the caller cancelled the call"), afters)
                raise
            assert outcome is not None
        result = self._unwind(call, outcome, afters)
        for settle in self._settles:
            await settle()
        yield result

    def _heavy(self, request: CallRequest) -> bool:
        plugin = self._plugins.find(request.plugin_id)
        operation = find_operation(plugin, request.operation) if plugin is not None else None
        return operation is not None and operation.heavy

    # ----------------------------------------------------------------- the call

    def _enter(self, call: Call) -> tuple[Outcome | None, tuple[Any, ...]]:
        """The ``before`` hooks, in order: the first refusal (``None`` when none refused)
        and the ``after`` hooks the call unwinds through. The hooks are synchronous, so
        no cancellation can land between them."""
        for before, unwind in self._befores:
            outcome = before(call)
            if outcome is not None:
                return outcome, unwind
        return None, self._afters

    def _begin(self, request: CallRequest) -> Call:
        params = request.params
        if not isinstance(params, Mapping):
            raise CallError("params must be a mapping", code="invalid_request")
        context = request.context or CallContext(request_id=new_request_id())
        if OVERLAY not in params:
            return Call(request.plugin_id, request.operation, params, context,
                        time.perf_counter(), time.time(), request.timeout_ms,
                        request.approval_receipt)  # fmt: skip
        fault = None
        try:
            params, host_context = split(params)
        except OverlayError as exc:
            params, host_context, fault = dict(request.params), HostContext(), exc
        call = Call(request.plugin_id, request.operation, params, context, time.perf_counter(),
                    time.time(), request.timeout_ms, request.approval_receipt)  # fmt: skip
        call.host_context, call.overlay_fault = host_context, fault
        return call

    def _unwind(self, call: Call, outcome: Outcome, afters: tuple[Any, ...]) -> Result:
        """The result envelope, through the ``after`` of every step whose ``before`` ran."""
        duration_ms = (time.perf_counter() - call.started) * 1000.0
        cost = dict(outcome.cost) if outcome.cost else {}
        cost["duration_ms"] = round(duration_ms, 3)
        data = call.data
        result = Result(
            status=outcome.status,
            data=outcome.data if data is UNSET else data,
            error=outcome.error,
            cost=cost,
            diagnostics=outcome.diagnostics if call.context.debug else (),
            skips=outcome.skips,
            citations=outcome.citations,
            next_cursor=outcome.next_cursor,
            plugin_id=call.plugin_id if call.plugin is None else call.plugin.id,
            operation=call.operation_id,
            request_id=call.context.request_id,
            payload_ref=call.payload_ref,
        )
        for after in afters:
            result = after(call, result)
        return result

    def _target(self, call: Call) -> tuple[Runtime | None, Target, Operation]:
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        runtime = self._runtimes.get(plugin.descriptor.runtime.kind)
        key = (plugin.id, plugin.content_hash)
        target = self._targets.get(key)
        if target is None or target.location != plugin.location or target.trust != plugin.trust:
            target = Target(plugin.descriptor, plugin.location, plugin.trust, plugin.content_hash)
            self._targets[key] = target
        return runtime, target, operation

    async def _run(self, call: Call) -> Outcome:
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
            return refuse("timeout", f"no result within {timeout * 1000:.0f} ms")
        except PlugyardError as exc:
            return refuse(exc.code, exc.message)
        return self._check_output(call, operation, outcome)

    def _invoke(
        self, runtime: Runtime, target: Target, operation: Operation, call: Call
    ) -> Awaitable[Answer]:
        params = dict(call.arguments)  # the plugin may not change the caller's mapping
        fills = call.fills
        if fills:  # x-binding values the caller never sees (and the audit never hashes)
            for name, value in fills.items():
                params.setdefault(name, value)
        call.dispatched = True
        params = with_defaults(operation.parameters, params)
        host = call.host if call.host is not None else self._host(call)
        return runtime.invoke(target, operation, params, call.context, host)

    async def _run_streaming(self, call: Call) -> AsyncIterator[Progress | Outcome]:
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
            yield refuse("timeout", f"no result within {timeout * 1000:.0f} ms")
            return
        except PlugyardError as exc:
            yield refuse(exc.code, exc.message)
            return
        yield self._check_output(call, operation, outcome)

    def _check_output(self, call: Call, operation: Operation, outcome: Outcome | None) -> Outcome:
        """Normalise, validate and size-check what the plugin produced."""
        assert call.plugin is not None
        if outcome is None:
            return refuse("invalid_output", "the operation ended without a result")
        if not isinstance(outcome, Outcome):
            return refuse("invalid_output", f"runtime answered {type(outcome).__name__}")
        data = outcome.data
        try:
            encoded = _encode(data)
        except (TypeError, ValueError, OverflowError) as exc:
            return refuse("invalid_output", f"output is not JSON: {exc}")
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
                return refuse("output_validation_error", f"output schema is invalid: {exc}")
            if faults:
                return refuse(
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

    # ----------------------------------------------------------------- helpers

    def _timeout_s(self, call: Call) -> float:
        assert call.plugin is not None
        candidates = [self._limits.default_timeout_ms]
        if call.plugin.descriptor.timeout_ms:
            candidates = [call.plugin.descriptor.timeout_ms]
        if call.timeout_ms is not None:
            candidates.append(call.timeout_ms)
        return max(min(candidates), 1) / 1000.0

    def _host(self, call: Call) -> Host:
        """The plugin's plain host object (cached); a step may give a call its own."""
        plugin = call.plugin
        assert plugin is not None
        key = (plugin.id, plugin.content_hash)
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts[key] = make_host(plugin.id, plugin.descriptor.host_capabilities)
        return host


def _no_runtime(target: Target) -> Outcome:
    kind = target.descriptor.runtime.kind
    return refuse("plugin_unavailable", f"no {kind!r} runtime on this host")
