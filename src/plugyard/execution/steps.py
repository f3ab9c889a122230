"""The call path as an ordered list of steps (DESIGN.md §4).

Each step is one small object with a ``before`` and an ``after``, run like pluggy's
wrappers or Semantic Kernel's filters: the ``before`` hooks run in list order and may
refuse (the refusal is the step's outcome, and no later ``before`` runs); then the
runtime, unless a step refused; then the ``after`` hooks, in reverse order, for every
step whose ``before`` ran — so a step listed first (audit) sees everything that any
later step, or the plugin, did. The executor knows only this module: which steps there
are, and in which order, the composition root (``plugyard.yard``) decides.

Hooks are plain functions, not coroutines: every built-in step is synchronous, and an
``await`` per hook would cost more than most of them do. A step with nothing to do in one
of its hooks says so with :data:`NOTHING` as that hook; the list is compiled once, and a
skipped hook costs nothing per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.errors import CallError
from plugyard.execution.result import Result
from plugyard.execution.validation import SchemaError, Validators
from plugyard.manifest.model import Operation
from plugyard.manifest.nearest import close_matches, nearest
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome
from plugyard.telemetry import CallTracer, call_tracer

if TYPE_CHECKING:
    from plugyard.execution.host import Host
    from plugyard.execution.overlay import HostContext, OverlayError

#: What a step's ``before`` answers: ``None`` to go on, or the call's outcome.
Before = Callable[["Call"], Outcome | None]
#: What a step's ``after`` does: it sees the result and answers it, changed or not.
After = Callable[["Call", Result], Result]


class _Nothing:
    """Not a function, so a class attribute set to it stays itself on an instance."""

    def __call__(self, *_: Any) -> Any:  # pragma: no cover - compiled away, never called
        raise AssertionError("a NOTHING hook is skipped, never called")

    def __repr__(self) -> str:
        return "NOTHING"


#: The hook of a step that has nothing to do there (skipped when the list is compiled).
NOTHING: Any = _Nothing()

#: ``Call.data`` before the output check set it (a refusal's data is its outcome's).
UNSET: Any = object()


class Step(Protocol):
    """One step of the call path. A step whose ``after`` hands work to a batch (the
    audit chain's group commit) may also have ``settle``, a function whose awaitable the
    executor awaits before the result goes out."""

    @property
    def name(self) -> str: ...

    def before(self, call: Call, /) -> Outcome | None: ...

    def after(self, call: Call, result: Result, /) -> Result: ...


class Call:
    """One call as the steps see it.

    A user's step reads ``plugin_id``, ``operation_id``, ``arguments`` (which it may
    replace before the parameters are validated), ``subject``, ``roles``,
    ``request_id`` and ``state`` (its own per-call slots: a span started in ``before``
    and ended in ``after``, say). plugyard's own steps read the rest.
    """

    __slots__ = (
        "arguments",
        "asked",
        "context",
        "data",
        "dispatched",
        "fills",
        "host",
        "host_context",
        "operation",
        "overlay_fault",
        "payload_ref",
        "plugin",
        "plugin_id",
        "receipt",
        "request_params",
        "started",
        "state",
        "timeout_ms",
        "wall",
    )

    def __init__(
        self,
        plugin_id: str,
        operation_id: str | None,
        arguments: Mapping[str, Any],
        context: CallContext,
        started: float,
        wall: float,
        timeout_ms: int | None = None,
        receipt: str | None = None,
    ) -> None:
        self.plugin_id = plugin_id
        #: the operation as asked; the resolved one is ``operation``
        self.asked = operation_id
        self.arguments: Mapping[str, Any] = arguments
        #: what the caller sent (after the Shu overlay was taken out): the audit's hash
        self.request_params: Mapping[str, Any] = arguments
        self.context = context
        self.started = started
        self.wall = wall
        self.timeout_ms = timeout_ms
        #: the approval receipt the caller presented
        self.receipt = receipt
        self.plugin: RegisteredPlugin | None = None
        self.operation: Operation | None = None
        #: per-call slots of the steps, by the step's name
        self.state: dict[str, Any] = {}
        #: parameters a step fills in for the plugin only (``x-binding`` values)
        self.fills: Mapping[str, Any] | None = None
        #: the host object a step made for this call (else the plugin's plain one)
        self.host: Host | None = None
        self.host_context: HostContext | None = None
        self.overlay_fault: OverlayError | None = None
        self.dispatched = False
        self.data: Any = UNSET
        self.payload_ref: str | None = None

    @property
    def operation_id(self) -> str | None:
        """The operation: the resolved one's id, else the name asked for."""
        op = self.operation
        return op.id if op is not None else self.asked

    @property
    def subject(self) -> str | None:
        return self.context.subject

    @property
    def roles(self) -> tuple[str, ...]:
        return self.context.roles

    @property
    def request_id(self) -> str:
        return self.context.request_id


class _Compiled:
    """A list of steps made ready to run: the ``before`` hooks, each with the ``after``
    hooks to run when it refuses, and the ``after`` hooks of a call that ran."""

    __slots__ = ("afters", "befores", "names", "settles")

    def __init__(self, steps: Sequence[Step]) -> None:
        names = [s.name for s in steps]
        if len(set(names)) != len(names):
            raise CallError(f"step names repeat: {names}", code="invalid_request")
        self.names = tuple(names)
        befores: list[tuple[Before, tuple[After, ...]]] = []
        entered: list[After] = []
        for step in steps:
            after = step.after
            if after is not NOTHING:
                entered.append(after)
            before = step.before
            if before is not NOTHING:
                befores.append((before, tuple(reversed(entered))))
        self.befores = tuple(befores)
        self.afters = tuple(reversed(entered))
        #: coroutines the result waits for (a sink that batches, e.g. the audit chain)
        found = (getattr(s, "settle", None) for s in steps)
        self.settles: tuple[Callable[[], Awaitable[None]], ...] = tuple(
            f for f in found if f is not None
        )


def compile_steps(steps: Sequence[Step]) -> _Compiled:
    return _Compiled(steps)


def refuse(code: str, message: str, **details: Any) -> Outcome:
    """A refusal by the call path itself (not by the plugin)."""
    status = "timeout" if code == "timeout" else "error"
    return Outcome(status=status, error=ErrorInfo(code, message, details))


# --------------------------------------------------------------------- the core steps


class PluginLookup(Protocol):
    """Where the executor finds plugins (the registry, or a test double)."""

    def find(self, plugin_id: str) -> RegisteredPlugin | None: ...


#: Whether a caller may learn that a plugin exists (``plugin_not_found`` names the
#: nearest id only when it may).
Sees = Callable[[CallContext, RegisteredPlugin], bool]


def _sees_all(context: CallContext, plugin: RegisteredPlugin) -> bool:
    return True


class Resolve:
    """The plugin and operation asked for (``plugin_not_found``, ``operation_not_found``),
    and a well-formed Shu overlay (``invalid_parameters``)."""

    name = "resolve"
    after = NOTHING

    def __init__(self, plugins: PluginLookup, sees: Sees | None = None) -> None:
        self.plugins = plugins
        self.sees = sees or _sees_all

    def before(self, call: Call) -> Outcome | None:
        plugin = self.plugins.find(call.plugin_id)
        if plugin is None:
            return self._unknown_plugin(call)
        call.plugin = plugin
        operation = find_operation(plugin, call.asked)
        if operation is None:
            return _unknown_operation(plugin, call.asked)
        call.operation = operation
        fault = call.overlay_fault
        if fault is not None:
            return refuse("invalid_parameters", f"{fault.pointer}: {fault}",
                          errors=[{"pointer": fault.pointer, "message": str(fault)}])  # fmt: skip
        return None

    def _unknown_plugin(self, call: Call) -> Outcome:
        """``plugin_not_found``, naming the nearest id the caller may call — never one it
        may not (a suggestion must not reveal what a listing would hide)."""
        wanted = call.plugin_id
        message = f"no plugin {wanted!r}"
        ids = getattr(self.plugins, "ids", None)
        if callable(ids):
            for guess in close_matches(wanted, ids()):
                found = self.plugins.find(guess)
                if found is not None and self.sees(call.context, found):
                    message += f" — did you mean {guess!r}?"
                    break
        return refuse("plugin_not_found", message)


class Budget:
    """A plugin that cannot run here is refused (``plugin_unavailable``); one whose
    ``maxLLMCalls`` exceeds what is left of the caller's budget is skipped."""

    name = "budget"
    after = NOTHING

    def before(self, call: Call) -> Outcome | None:
        plugin = call.plugin
        assert plugin is not None
        if not plugin.available:
            return refuse("plugin_unavailable", plugin.unavailable_reason or "unavailable")
        budget = call.context.budgets.get("llm_calls")
        needed = plugin.descriptor.max_llm_calls
        if isinstance(budget, int | float) and needed is not None and needed > budget:
            return Outcome(
                status="skipped-budget",
                error=ErrorInfo("budget_exceeded", f"needs up to {needed} LLM calls", {}),
            )
        return None


class Validate:
    """The arguments against the operation's parameters (compiled, cached per schema)."""

    name = "validate"
    after = NOTHING

    def __init__(self, validators: Validators) -> None:
        self.validators = validators

    def before(self, call: Call) -> Outcome | None:
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        if not isinstance(call.arguments, Mapping):
            return refuse("invalid_parameters", "/: the arguments are not an object")
        try:
            faults = self.validators.check(
                (plugin.content_hash, operation.id, "in"), operation.parameters, call.arguments
            )
        except SchemaError as exc:
            return refuse("plugin_unavailable", f"parameters schema is invalid: {exc}")
        if faults:
            first = faults[0]
            return refuse(
                "invalid_parameters",
                f"{first.pointer or '/'}: {first.message}",
                errors=[f.to_dict() for f in faults],
                schema=operation.parameters,
            )
        return None


# --------------------------------------------------------------------- users' steps


class StepView:
    """What a user's step sees of a call: who asks what, not plugyard's internals."""

    __slots__ = ("_call",)

    def __init__(self, call: Call) -> None:
        self._call = call

    @property
    def plugin_id(self) -> str:
        return self._call.plugin_id

    @property
    def operation(self) -> str | None:
        return self._call.operation_id

    @property
    def arguments(self) -> Mapping[str, Any]:
        return self._call.arguments

    @arguments.setter
    def arguments(self, value: Mapping[str, Any]) -> None:
        self._call.arguments = value

    @property
    def subject(self) -> str | None:
        return self._call.context.subject

    @property
    def roles(self) -> tuple[str, ...]:
        return self._call.context.roles

    @property
    def request_id(self) -> str:
        return self._call.context.request_id

    @property
    def state(self) -> dict[str, Any]:
        """This call's slots, shared by the steps (keep yours under your step's name)."""
        return self._call.state


class UserStep(Protocol):
    """A step an application adds (see :class:`StepBase`)."""

    @property
    def name(self) -> str: ...

    def before(self, call: StepView, /) -> Outcome | None: ...

    def after(self, call: StepView, result: Result, /) -> Result: ...


class StepBase:
    """A user's step that does nothing: override ``before``, ``after`` or both."""

    name = "step"

    def before(self, call: StepView) -> Outcome | None:
        return None

    def after(self, call: StepView, result: Result) -> Result:
        return result


_VIEW = "plugyard.view"


def _view(call: Call) -> StepView:
    view: StepView | None = call.state.get(_VIEW)
    if view is None:
        view = call.state[_VIEW] = StepView(call)
    return view


class Guarded:
    """A user's step on the call path: it sees a :class:`StepView`, and whatever it
    raises fails the call with ``step_failed`` (the step's name in the details). A hook
    a :class:`StepBase` subclass leaves alone is :data:`NOTHING`: it costs nothing."""

    __slots__ = ("after", "before", "name", "step")

    def __init__(self, step: UserStep) -> None:
        name = getattr(step, "name", None)
        if not isinstance(name, str) or not name:
            raise CallError("a step needs a name", code="invalid_request")
        self.step, self.name = step, name
        kind = type(step)
        self.before: Before = (
            NOTHING if getattr(kind, "before", None) is StepBase.before else self._before
        )
        self.after: After = (
            NOTHING if getattr(kind, "after", None) is StepBase.after else self._after
        )

    def _before(self, call: Call) -> Outcome | None:
        try:
            answer = self.step.before(_view(call))
        except Exception as exc:
            return _step_failed(self.name, "before", exc)
        if answer is not None and not isinstance(answer, Outcome):
            return _step_failed(
                self.name, "before", TypeError(f"answered {type(answer).__name__}, not Outcome")
            )
        return answer

    def _after(self, call: Call, result: Result) -> Result:
        try:
            answer = self.step.after(_view(call), result)
        except Exception as exc:
            return _failed_result(result, _step_failed(self.name, "after", exc))
        if not isinstance(answer, Result):
            failed = TypeError(f"answered {type(answer).__name__}, not Result")
            return _failed_result(result, _step_failed(self.name, "after", failed))
        return answer


def guarded(step: UserStep) -> Guarded:
    """``step`` made ready for the call path."""
    return Guarded(step)


def _step_failed(name: str, hook: str, exc: Exception) -> Outcome:
    return refuse(
        "step_failed",
        f"step {name!r} failed in {hook}: {type(exc).__name__}",
        step=name,
        hook=hook,
    )


def _failed_result(result: Result, outcome: Outcome) -> Result:
    return Result(
        status=outcome.status,
        error=outcome.error,
        cost=result.cost,
        plugin_id=result.plugin_id,
        operation=result.operation,
        request_id=result.request_id,
    )


def placed(
    steps: Iterable[Step],
    step: Step,
    *,
    before: str | None = None,
    after: str | None = None,
    fixed: frozenset[str] = frozenset(),
) -> list[Step]:
    """``steps`` with ``step`` placed just before (outside) or just after (inside) the
    step named; with neither, last (just before the runtime). ``fixed`` names steps
    nothing may be placed outside of."""
    listed = list(steps)
    names = [s.name for s in listed]
    if step.name in names:
        raise CallError(f"there is a step {step.name!r} already", code="invalid_request")
    if before is not None and after is not None:
        raise CallError("place a step before one step or after one, not both",
                        code="invalid_request")  # fmt: skip
    anchor = before if before is not None else after
    if anchor is None:
        return [*listed, step]
    if anchor not in names:
        raise CallError(f"no step {anchor!r} on the call path (it has: {', '.join(names)})",
                        code="invalid_request")  # fmt: skip
    at = names.index(anchor) + (1 if after is not None else 0)
    outermost = max((names.index(n) for n in fixed if n in names), default=-1)
    if at <= outermost:
        raise CallError(f"a step cannot run outside {names[outermost]!r}", code="invalid_request")
    listed.insert(at, step)
    return listed


# --------------------------------------------------------------------- helpers


def find_operation(plugin: RegisteredPlugin, name: str | None) -> Operation | None:
    operations = plugin.descriptor.operations
    if name is None:
        return operations[0] if len(operations) == 1 else None
    for op in operations:
        if op.id == name:
            return op
    normalised = name.lower().replace("-", "_").replace(" ", "_")
    return next((op for op in operations if op.id.lower() == normalised), None)


def _unknown_operation(plugin: RegisteredPlugin, name: str | None) -> Outcome:
    names = [op.id for op in plugin.descriptor.operations]
    listed = ", ".join(names)
    if name is None:
        message = f"plugin {plugin.id!r} has several operations: {listed} — name one"
    else:
        guess = nearest(name, names)
        hint = f" — did you mean {guess!r}?" if guess else f" (it has: {listed})"
        message = f"plugin {plugin.id!r} has no operation {name!r}{hint}"
    return refuse("operation_not_found", message, operations=names)


class Trace:
    """The call's span and metrics (``plugyard.telemetry``). Listed outermost, so its
    ``after`` sees every call, whichever step refused it; only on the path when
    telemetry is on (:func:`traced_steps`)."""

    name = "trace"

    def __init__(self, tracer: CallTracer) -> None:
        self._tracer = tracer

    def before(self, call: Call, /) -> Outcome | None:
        call.state["trace"] = self._tracer.start()
        return None

    def after(self, call: Call, result: Result, /) -> Result:
        started = call.state.get("trace")
        if started is not None:
            error, context, operation = result.error, call.context, call.operation
            # The descriptor's id, not the plugin's: the call resolved it, so it is read
            # already, and ``RegisteredPlugin.id`` is slower to ask (a stored one's).
            descriptor = call.plugin.descriptor if call.plugin else None
            self._tracer.end(
                started,
                result.status,
                error.code if error else None,
                float(result.cost.get("duration_ms", 0.0)),  # the result's own
                asked=(call.plugin_id, call.asked),
                plugin=descriptor.id if descriptor else None,
                operation=operation.id if operation else None,
                runtime=descriptor.runtime.kind if descriptor else None,
                request_id=context.request_id,
                subject=context.subject,
            )
        return result


def traced_steps(steps: list[Step]) -> list[Step]:
    """``steps`` with the tracing step first when telemetry is on (else as they are:
    the bare path pays nothing for tracing it does not do)."""
    tracer = call_tracer()
    return steps if tracer is None else [Trace(tracer), *steps]
