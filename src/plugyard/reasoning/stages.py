"""One family call of a request: through the executor, judged, deducted and recorded.

Every stage call goes through the executor (policy, validation, deadline, audit) with
the request's runtime context. Its status is the family status of the answer — the
status object's ``status`` (a wrapper may put it in ``data``) — and must be one its
operation may answer: anything else is recorded as ``error`` (``invalid_output``), as
is a plugin that raised, timed out or answered nonsense. A failure is data here, never
an exception: the request goes on with the next plugin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.manifest.dialects.mrp_inputs import mrp_members, reads_mrp_members
from plugyard.manifest.families import contract
from plugyard.reasoning.bridge import Budget, ModelBridge
from plugyard.reasoning.catalog import STAGE_FAMILY, Catalog, misnamed
from plugyard.reasoning.context import RuntimeContext
from plugyard.reasoning.record import StageEntry
from plugyard.reasoning.trace import ROOT, Frame, Recorder
from plugyard.runtimes.base import ErrorInfo

#: Family statuses the DS027 record has no word for, and the word it uses instead.
_RECORDED_AS = {"no-context": "insufficient"}
_FAILED = frozenset({"error", "timeout", "pending_approval", "cancelled"})
#: A judge looks at a successful answer and may still refuse it (an intent document the
#: core cannot admit, say): the call is then recorded as ``error`` with that reason.
Judge = Callable[[Mapping[str, Any]], ErrorInfo | None]
Kind = Literal["stage", "planner", "hook"]


@dataclass(frozen=True, slots=True)
class StageCall:
    """What one call came to: the family status, the answer's data, why it failed."""

    stage: str
    plugin_id: str
    status: str
    data: Mapping[str, Any] = field(default_factory=dict)
    error: ErrorInfo | None = None
    llm_calls: int = 0


class StageRunner:
    """Runs a request's family calls; deducts what they use from the request's budget."""

    def __init__(
        self,
        executor: Executor,
        catalog: Catalog,
        context: RuntimeContext,
        budget: Budget,
        recorder: Recorder,
        *,
        timeout_ms: int | None = None,
    ) -> None:
        self.executor = executor
        self.catalog = catalog
        self.context = context
        self.budget = budget
        self.recorder = recorder
        self.timeout_ms = timeout_ms

    async def run(
        self,
        stage: str,
        plugin_id: str,
        operation: str,
        payload: Mapping[str, Any],
        *,
        planner: str = "",
        frame: Frame = ROOT,
        judge: Judge | None = None,
        kind: Kind = "stage",
        hook: str | None = None,
    ) -> StageCall:
        """Call ``operation`` of ``plugin_id`` at ``stage``. Only ``kind="stage"`` calls
        are stages of the DS027 record; planner and hook calls are traced. ``hook`` names
        the hook whose context the call gets (``source-text``, ``session-event``)."""
        started = time.perf_counter()
        problem = misnamed(self.catalog, stage, plugin_id)
        plugin = self.catalog.find(plugin_id)
        if problem is not None or plugin is None:  # checked before anything runs
            refusal = ErrorInfo(*(problem or ("plugin_not_found", f"no plugin {plugin_id!r}")))
            refused = StageCall(stage, plugin_id, "error", {}, refusal)
            self._trace(refused, operation, (), None, started, planner, frame, kind)
            return refused
        context, bridge = self.context.call(plugin, self.budget.remaining, hook=hook)
        # MRP-VM's JavaScript plugins read its engine's member names, not ``prompt``.
        given = mrp_members(payload) if reads_mrp_members(plugin.descriptor) else dict(payload)
        request = CallRequest(plugin_id, operation, given, context, self.timeout_ms)
        result = await self.executor.call(request)
        status, error = family_status(result, stage, operation)
        data = result.data if isinstance(result.data, Mapping) else {}
        if status == "success" and judge is not None:
            error = judge(data)
            status = "error" if error is not None else status
        used = _used(result, data, bridge)
        self.budget.spend(used)
        call = StageCall(stage, plugin_id, status, data, error, used)
        roles = plugin.descriptor.model_roles
        self._trace(call, operation, roles, bridge, started, planner, frame, kind)
        return call

    def _trace(
        self,
        call: StageCall,
        operation: str,
        roles: tuple[str, ...],
        bridge: ModelBridge | None,
        started: float,
        planner: str,
        frame: Frame,
        kind: Kind,
    ) -> None:
        metadata = call.data.get("metadata")
        model = metadata.get("model") if isinstance(metadata, Mapping) else None
        if not isinstance(model, str):
            model = bridge.model_names[-1] if bridge is not None and bridge.model_names else None
        sufficient = call.data.get("sufficient") if call.stage == "kb" else None
        entry = StageEntry(
            planner,
            call.stage,
            call.plugin_id,
            _RECORDED_AS.get(call.status, call.status),
            (time.perf_counter() - started) * 1000.0,
            call.llm_calls,
            sufficient if isinstance(sufficient, bool) and kind == "stage" else None,
            model,
            roles[0] if roles else None,
        )
        self.recorder.stage(
            entry, operation, frame, plugin_status=call.status, error=call.error, kind=kind
        )


def family_status(result: Result, stage: str, operation: str) -> tuple[str, ErrorInfo | None]:
    """The family status of ``result`` and, when it failed, why."""
    if result.status == "skipped-budget":
        return "skipped-budget", result.error
    if result.status in _FAILED or result.error is not None:
        return "error", result.error or ErrorInfo("plugin_error", f"status {result.status!r}")
    data = result.data
    status = result.status
    if isinstance(data, Mapping):
        if data.get("x-plugyard-truncated"):
            return "error", ErrorInfo("invalid_output", "the answer is larger than allowed")
        inner = data.get("status")
        if isinstance(inner, str):
            status = inner
    allowed = _statuses(stage, operation)
    if status not in allowed:
        said = f"status {status!r} is not one of {', '.join(allowed)}"
        return "error", ErrorInfo("invalid_output", said)
    if status == "error":
        raw = data.get("error") if isinstance(data, Mapping) else None
        code = raw.get("code") if isinstance(raw, Mapping) else None
        message = raw.get("message") if isinstance(raw, Mapping) else None
        return "error", ErrorInfo(
            "plugin_error",
            str(message or "the plugin reported an error"),
            {"plugin_code": code} if code else {},
        )
    return status, None


def _statuses(stage: str, operation: str) -> tuple[str, ...]:
    found = contract(STAGE_FAMILY[stage])
    if found is None:
        return ()
    for op in found.operations:
        if op.id == operation:
            return op.statuses or ("success",)
    return ()


def _used(result: Result, data: Mapping[str, Any], bridge: ModelBridge) -> int:
    reported = result.cost.get("llm_calls", 0) if result.cost else 0
    metadata = data.get("metadata")
    said = metadata.get("llmCalls") if isinstance(metadata, Mapping) else 0
    counts = [c for c in (reported, said, bridge.calls) if isinstance(c, int | float)]
    return int(max(counts, default=0))
