"""A lab for the reasoning loop: an in-memory registry and store, the executor, and family
plugins scripted per test. Every call a plugin gets is logged, so a test can say which
plugins ran, in what order and with what input."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.execution.executor import Executor
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.manifest.families import PLANNER_OUTCOME_SCHEMA
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.service import ReasoningService
from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.runtimes.python import InProcessRuntime, plugin
from plugyard.store.audit import SqlAuditRepository
from plugyard.store.store import Store
from plugyard.yard.steps import call_path

Answer = Mapping[str, Any] | Callable[[dict[str, Any], dict[str, Any]], Any]


@dataclass
class Call:
    plugin: str
    operation: str
    input: dict[str, Any]
    context: dict[str, Any]


@dataclass
class Lab:
    registry: Registry = field(default_factory=Registry)
    runtime: InProcessRuntime = field(default_factory=InProcessRuntime)
    calls: list[Call] = field(default_factory=list)
    store: Store = field(default_factory=lambda: Store.open(":memory:"))
    limits: Limits = field(default_factory=Limits)
    model: Any = None

    def __post_init__(self) -> None:
        self.sessions = SqlSessionStore(self.store)
        self.outcomes = SqlOutcomeStore(self.store)
        weakref.finalize(self, self.store.close)  # tests make labs without closing them
        self.audit = ChainedAudit(SqlAuditRepository(self.store), b"k" * 32)
        steps = call_path(self.registry, audit=self.audit)
        self.executor = Executor(self.registry, {"python": self.runtime}, steps=steps)

    @property
    def service(self) -> ReasoningService:
        return ReasoningService(
            self.executor,
            self.registry,
            self.sessions,
            self.outcomes,
            model=self.model,
            limits=self.limits,
        )

    def add(self, plugin_id: str, family: str, answers: Mapping[str, Answer], **fields: Any) -> str:
        """A family plugin whose methods answer ``answers[operation]`` (a status object, or
        a function of input and context); every call is logged."""
        fields.setdefault("description", f"The {family} test plugin {plugin_id}.")
        if family in ("sd", "kb", "gs"):
            fields.setdefault("planner_hints", {"relative_cost": 0.1})
        definition = plugin(plugin_id, family=family, **fields)
        for operation, answer in {**DEFAULTS.get(family, {}), **answers}.items():
            definition.operation(id=operation, inline=not _is_async(answer))(
                self._method(plugin_id, operation, answer)
            )
        self.runtime.provide(definition)
        self.registry.register(RegisteredPlugin.of(definition.descriptor, "code"), replace=True)
        return plugin_id

    def _method(self, plugin_id: str, operation: str, answer: Answer) -> Callable[..., Any]:
        def method(input: dict[str, Any], ctx: dict[str, Any]) -> Any:
            self.calls.append(Call(plugin_id, operation, input, ctx))
            return answer(input, ctx) if callable(answer) else dict(answer)

        async def async_method(input: dict[str, Any], ctx: dict[str, Any]) -> Any:
            self.calls.append(Call(plugin_id, operation, input, ctx))
            assert callable(answer)
            return await answer(input, ctx)

        return async_method if _is_async(answer) else method

    def ran(self, operation: str | None = None) -> list[str]:
        return [c.plugin for c in self.calls if operation is None or c.operation == operation]

    def inputs(self, plugin_id: str, operation: str) -> list[dict[str, Any]]:
        return [c.input for c in self.calls if c.plugin == plugin_id and c.operation == operation]

    def reason(self, prompt: str = "What is the capital of France?", **options: Any) -> Any:
        return asyncio.run(self.service.reason(prompt, **options))


#: What a family method the test does not script answers.
DEFAULTS: dict[str, dict[str, Answer]] = {
    "sd": {
        "normalize_persistent_context": {
            "status": "unsupported",
            "contextCNL": None,
            "metadata": {},
            "error": None,
        }
    },
    "plan": {"record_outcome": lambda i, c: None},
}


def _is_async(answer: Answer) -> bool:
    return asyncio.iscoroutinefunction(answer)


# ----------------------------------------------------------------- scripted answers


def seeds(units: Iterable[str] = (), act: str = "explain", text: str | None = None) -> Answer:
    def detect(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        lines = [
            f'@k{i} ku atomic "turn::{i}"\n@ks{i} set $k{i} claim "{u}"'
            for i, u in enumerate(units)
        ]
        prompt = text or input["prompt"]
        return {
            "status": "success",
            "intentCNL": f'@i1 intent {act} "{prompt}"\n@is1 set $i1 topic "geography"',
            "currentTurnContextCNL": "\n".join(lines),
            "metadata": {"llmCalls": 0, "model": None},
            "error": None,
        }

    return detect


def retrieved(*texts: str, status: str = "success", sufficient: bool = True) -> dict[str, Any]:
    units = [
        {"title": f"unit {i}", "sourceLink": f"doc#{i}", "text": t} for i, t in enumerate(texts)
    ]
    return {
        "status": status,
        "resolvedIntents": [{"units": units}] if units else None,
        "sufficient": sufficient,
        "retrievalTrace": {
            "purpose": "task-evidence",
            "kuLevelsUsed": ["leaf"],
            "totalKUsConsidered": len(units),
            "selectedKUCount": len(units),
        },
        "error": None,
    }


def solved(
    text: str = "Paris.", status: str = "success", llm_calls: int = 0, **document: Any
) -> dict[str, Any]:
    return {
        "status": status,
        "responseMarkdown": text if status == "success" else None,
        "responseDocument": document or None,
        "metadata": {"llmCalls": llm_calls, "model": "scripted" if llm_calls else None},
        "error": None,
    }


def verdict(status: str, reason: str = "scripted") -> dict[str, Any]:
    return {
        "status": status,
        "verdict": status,
        "reason": reason,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }


def planned(kb: Iterable[str] = (), gs: Iterable[str] = (), **more: Any) -> dict[str, Any]:
    return {
        "kbPluginOrder": list(kb),
        "goalSolverOrder": list(gs),
        "decompose": False,
        "framePurpose": None,
        "notes": [],
        **more,
    }


def basic(lab: Lab, *, kb: Iterable[str] = ("kb-a",), gs: Iterable[str] = ("gs-a",)) -> Lab:
    """A seed detector, a planner ordering ``kb`` then ``gs``, and plugins that answer."""
    lab.add("sd-a", "sd", {"detect_seeds": seeds()})
    for plugin_id in kb:
        lab.add(plugin_id, "kb", {"retrieve": retrieved("Paris is the capital of France.")})
    for plugin_id in gs:
        lab.add(plugin_id, "gs", {"solve": solved()})
    lab.add("plan-a", "plan", {"build_plan": planned(kb, gs)})
    return lab


def schema_valid(record: Mapping[str, Any]) -> list[str]:
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(PLANNER_OUTCOME_SCHEMA)
    return [e.message for e in validator.iter_errors(dict(record))]
