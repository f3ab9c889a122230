"""Spans and metrics for calls, flows and model tokens (docs/telemetry.md).

One :class:`Telemetry` is active per process, or none. With none every hook here is a
check of one module variable and returns; nothing of OpenTelemetry is imported, not
even its API (importing it costs a quarter of a second). With one, spans and metrics go
to the tracer and meter providers it was given: the SDK's with an OTLP exporter when
the settings ask for export (:func:`configure`), or an application's own
(:func:`install`), such as the SDK's in-memory exporter in tests.

Names follow OpenTelemetry's semantic conventions where one exists: a call is an
``execute_tool`` span (``gen_ai.tool.name`` is the plugin, ``gen_ai.tool.call.id`` the
request id, ``error.type`` the error code, ``enduser.id`` the caller); model tokens go
to ``gen_ai.client.token.usage``. What has no convention is ``plugyard.*``.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
    from opentelemetry.trace import Span, TracerProvider

    from plugyard.telemetry.settings import TelemetrySettings

#: The instrumentation scope of every span and instrument plugyard makes.
SCOPE = "plugyard"
#: What a metric says for a plugin or operation the call never resolved: the name came
#: from the caller, and a caller must not be able to mint new time series (the
#: conventions' overflow value for attributes of unbounded cardinality).
OTHER = "_OTHER"
#: Outcomes a span marks as failed; the rest (pending approval, a skip) are answers.
_FAILED = frozenset({"error", "timeout"})
# Call latency in ms: a bare call takes microseconds, a model-backed one seconds.
_MS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0,
               250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0, 60000.0)  # fmt: skip
# The buckets gen_ai.client.token.usage's convention asks for.
_TOKEN_BUCKETS = tuple(float(4**n) for n in range(14))

P = ParamSpec("P")
R = TypeVar("R")


#: When and under which span a call began (:meth:`CallTracer.start`): the current
#: context then (a flow's span, or none) and the wall clock in ns.
CallStart = tuple["Context", int]


class CallTracer:
    """The executor's hook: a span and the call metrics for each call.

    The span is made whole when the call ends, from the parent and start time taken
    when it began: one ``start_span`` with every attribute, ended at once, is the least
    the SDK can be asked to do for a span (an open span written to again costs more
    per attribute). It is never the current span: the plugin's own spans, and the calls
    it makes, are children of the flow's span, siblings of the call's. A span
    processor's ``on_start`` therefore sees a call when it ends.
    """

    __slots__ = ("_counted", "_current", "_duration", "_error_status", "_record_subject",
                 "_tracer")  # fmt: skip

    def __init__(self, telemetry: Telemetry) -> None:
        from opentelemetry.context import get_current
        from opentelemetry.trace import Status, StatusCode

        self._tracer = telemetry.tracer
        self._counted = telemetry.counted
        self._duration = telemetry.duration
        self._record_subject = telemetry.record_subject
        self._current = get_current
        self._error_status: Callable[[str], Status] = functools.partial(Status, StatusCode.ERROR)

    def start(self) -> CallStart:
        """The parent (whatever span is current: a flow's) and the start time."""
        return self._current(), time.time_ns()

    def end(
        self,
        started: CallStart,
        status: str,
        error_code: str | None,
        duration_ms: float,
        *,
        asked: tuple[str, str | None],
        plugin: str | None,
        operation: str | None,
        runtime: str | None,
        request_id: str | None = None,
        subject: str | None = None,
    ) -> None:
        """Emit the span with the outcome and count the call. ``asked`` is the plugin
        and operation as the caller named them; ``plugin``, ``operation`` and
        ``runtime`` what the call resolved to (``None``: it never did)."""
        attributes: dict[str, str | float] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": asked[0],
            "plugyard.status": status,
            "plugyard.duration_ms": duration_ms,
        }
        named = operation if operation is not None else asked[1]
        if named is not None:
            attributes["plugyard.operation"] = named
        if runtime is not None:
            attributes["plugyard.runtime"] = runtime
        if request_id is not None:
            attributes["gen_ai.tool.call.id"] = request_id
        if error_code is not None:
            attributes["error.type"] = error_code
        if subject is not None and self._record_subject:
            attributes["enduser.id"] = subject
        span = self._tracer.start_span(f"execute_tool {asked[0]}", started[0],
                                       attributes=attributes, start_time=started[1])  # fmt: skip
        if error_code is not None and status in _FAILED:
            span.set_status(self._error_status(error_code))
        span.end()
        tool = plugin if plugin is not None else OTHER
        op = operation if operation is not None else OTHER
        self._duration.record(
            duration_ms,
            {"gen_ai.tool.name": tool, "plugyard.operation": op, "plugyard.status": status},
        )
        self._counted(tool, op, status, error_code)


class Telemetry:
    """A tracer, a meter and plugyard's instruments over the given providers."""

    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        *,
        record_subject: bool = False,
        settings: TelemetrySettings | None = None,
    ) -> None:
        # The installed distribution's version (the package root would import every
        # layer, by import-linter's reading of its lazy names).
        from importlib.metadata import PackageNotFoundError, version

        try:
            __version__: str | None = version("plugyard")
        except PackageNotFoundError:
            __version__ = None
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.record_subject = record_subject
        #: The settings it was built from (:func:`configure`); ``None`` when installed.
        self.settings = settings
        self.tracer = tracer_provider.get_tracer(SCOPE, __version__)
        meter = meter_provider.get_meter(SCOPE, __version__)
        # The two counters are kept here and read when the meter collects (observable
        # counters): a dict increment per call instead of two trips through the SDK's
        # measurement path, which costs more than the span (bench/telemetry.py).
        self._lock = threading.Lock()
        self._calls: dict[tuple[str, str, str], int] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self.calls = meter.create_observable_counter(
            "plugyard.calls", [self._observe_calls], unit="{call}",
            description="Plugin calls, by outcome.",
        )  # fmt: skip
        self.errors = meter.create_observable_counter(
            "plugyard.call.errors", [self._observe_errors], unit="{error}",
            description="Calls that answered an error code, by code.",
        )  # fmt: skip
        self.duration = meter.create_histogram(
            "plugyard.call.duration", unit="ms", description="Call latency.",
            explicit_bucket_boundaries_advisory=_MS_BUCKETS,
        )  # fmt: skip
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Tokens a model read (input) and wrote (output), per answer.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )  # fmt: skip
        self.call_tracer = CallTracer(self)

    def counted(self, plugin: str, operation: str, status: str, error_code: str | None) -> None:
        """Count one call (and its error) toward the observable counters."""
        with self._lock:
            key = (plugin, operation, status)
            self._calls[key] = self._calls.get(key, 0) + 1
            if error_code is not None:
                errors = (plugin, error_code)
                self._errors[errors] = self._errors.get(errors, 0) + 1

    def _observe_calls(self, options: CallbackOptions) -> Iterable[Observation]:
        from opentelemetry.metrics import Observation

        with self._lock:
            counts = list(self._calls.items())
        return [
            Observation(n, {"gen_ai.tool.name": p, "plugyard.operation": o, "plugyard.status": s})
            for (p, o, s), n in counts
        ]

    def _observe_errors(self, options: CallbackOptions) -> Iterable[Observation]:
        from opentelemetry.metrics import Observation

        with self._lock:
            counts = list(self._errors.items())
        return [Observation(n, {"gen_ai.tool.name": p, "error.type": c}) for (p, c), n in counts]

    @contextmanager
    def flow_span(self, flow: str, attributes: Mapping[str, str] | None = None) -> Iterator[Span]:
        """A flow's span, current while the block runs (calls inside nest under it)."""
        given = {"plugyard.flow": flow, **(attributes or {})}
        with self.tracer.start_as_current_span(f"plugyard.{flow}", attributes=given) as span:
            yield span

    def record_tokens(self, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        base = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        self.tokens.record(prompt_tokens, {**base, "gen_ai.token.type": "input"})
        self.tokens.record(completion_tokens, {**base, "gen_ai.token.type": "output"})

    def shutdown(self) -> None:
        """Flush and stop the providers, when they can (the SDK's can; the API's no-op
        providers have nothing to flush)."""
        for provider in (self.tracer_provider, self.meter_provider):
            stop = getattr(provider, "shutdown", None)
            if callable(stop):
                stop()


_active: Telemetry | None = None


def active() -> Telemetry | None:
    """The telemetry in force in this process, or ``None`` (off)."""
    return _active


def install(telemetry: Telemetry | None) -> Telemetry | None:
    """Make ``telemetry`` the one in force (``None``: off); answers the one before.
    For an application that set up OpenTelemetry itself, and for tests."""
    global _active
    previous, _active = _active, telemetry
    return previous


def configure(settings: TelemetrySettings) -> Telemetry | None:
    """Set up export as ``settings`` say, once per process for equal settings. Settings
    that leave it off change nothing: telemetry installed in code stays in force."""
    if not settings.enabled:
        return _active
    if _active is not None and _active.settings == settings:
        return _active
    from plugyard.telemetry.otlp import build

    telemetry = build(settings)
    previous = install(telemetry)
    if previous is not None and previous.settings is not None:
        previous.shutdown()  # built here from other settings: nobody else holds it
    return telemetry


def call_tracer() -> CallTracer | None:
    """The executor's hook, or ``None`` when telemetry is off."""
    return _active.call_tracer if _active is not None else None


_OFF: AbstractContextManager[None] = nullcontext()


def flow_span(
    flow: str, attributes: Mapping[str, str] | None = None
) -> AbstractContextManager[Span | None]:
    """``with flow_span("ask"):`` — the flow's parent span, or nothing when off."""
    telemetry = _active
    if telemetry is None:
        return _OFF
    return telemetry.flow_span(flow, attributes)


def traced(flow: str) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """A coroutine function run inside :func:`flow_span` (one line on a flow's entry)."""

    def wrap(function: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(function)
        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            telemetry = _active
            if telemetry is None:
                return await function(*args, **kwargs)
            with telemetry.flow_span(flow):
                return await function(*args, **kwargs)

        run.__dict__["plugyard_flow"] = flow  # which flow it opens, for a reader (and tests)
        return run

    return wrap


def record_tokens(model: str, prompt_tokens: int, completion_tokens: int) -> None:
    """Count one model answer's tokens (the llm layer calls it where answers arrive)."""
    telemetry = _active
    if telemetry is not None:
        telemetry.record_tokens(model, prompt_tokens, completion_tokens)
