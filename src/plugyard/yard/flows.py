"""The flows a yard runs over its executor: routing a question, the OpenAI-compatible
chat, reasoning over the MRP-VM families, and pipelines.

Each is a client of the executor, of search and of the caller's rights, never a way
around them; the chat model they share is the yard's, reached on first use, and every
request that reaches it passes one gate first (model_gate.py: the right, the rate, the
input caps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plugyard.deferred import part
from plugyard.registry.registry import Registry
from plugyard.store.store import Store
from plugyard.types import Caller
from plugyard.yard.execution import Execution
from plugyard.yard.finding import Finding, Teacher
from plugyard.yard.governing import Governing

if TYPE_CHECKING:
    from plugyard.llm import ChatModel
    from plugyard.pipelines.service import PipelineService
    from plugyard.reasoning import Reasoned, ReasoningService
    from plugyard.reasoning.trace import OnEvent
    from plugyard.routing import Answer
    from plugyard.yard.model_gate import GatedChatFlow, GatedRouter, ModelGate


class Flows:
    """Routing, chat, reasoning and pipelines, each built on first use."""

    def __init__(
        self,
        store: Store,
        registry: Registry,
        execution: Execution,
        finding: Finding,
        governing: Governing,
        model: Callable[[], ChatModel],
        model_rate_per_minute: int = 60,
        *,
        reasoning_model: bool = False,
    ) -> None:
        self.store = store
        self.registry = registry
        self.execution = execution
        self.finding = finding
        self.governing = governing
        self.model = model  # read at each use: the yard builds it on the first
        self.model_rate_per_minute = model_rate_per_minute
        #: Reasoning lends the model to its plugins only when one is configured: with it
        #: the planners put gs-llm first, 20-50x slower and no more often right on
        #: bench/reasoning_qa.py's held-out half than the offline solvers.
        self.reasoning_model = reasoning_model

    @part
    def model_gate(self) -> ModelGate:
        """What every request that reaches the model passes first (model_gate.py)."""
        from plugyard.store.rate_buckets import SqlRateBuckets
        from plugyard.yard.model_gate import ModelGate

        governing = self.governing
        return ModelGate(lambda: governing.policy, SqlRateBuckets(self.store),
                         self.model_rate_per_minute)  # fmt: skip

    @part
    def router(self) -> GatedRouter:
        """The routing flow (docs/routing.md); the model is built on its first question."""
        from plugyard.yard.model_gate import GatedRouter

        finding = self.finding
        return GatedRouter(self.execution.executor, finding.search, self.governing.rights,
                           self.model, teacher=Teacher(finding),
                           governance=self.governing.governance, gate=self.model_gate)  # fmt: skip

    @part
    def chat(self) -> GatedChatFlow:
        """The OpenAI-compatible chat flow (docs/openai.md): a conversation answered by
        the model with the tools the caller may call, run through the executor."""
        from plugyard.yard.model_gate import GatedChatFlow

        finding = self.finding
        return GatedChatFlow(self.execution.executor, finding.search, self.governing.rights,
                             self.model, self.governing.governance,
                             lambda query, documents: finding.discovery.rank(query, documents),
                             gate=self.model_gate)  # fmt: skip

    async def ask(self, /, message: str, **options: Any) -> Answer:
        """Route ``message`` to the operations the caller may call and answer it:
        ``subject``, ``roles``, ``k``, ``max_steps``, ``llm``… as ``Router.ask``."""
        return await self.router.ask(message, **options)

    @part
    def reasoning(self) -> ReasoningService:
        """Reasoning flows over the MRP-VM families: sessions, sources and the DS027
        records in the store, the chat model for LLM-backed plugins, discovery's embedder
        for KB plugins that retrieve by meaning (docs/reasoning.md)."""
        from plugyard.reasoning import ReasoningService
        from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore

        gate = self.model_gate

        def admit(caller: Caller, texts: Sequence[tuple[str, str]]) -> None:
            gate.admit(caller.subject, caller.roles, texts)

        return ReasoningService(
            self.execution.executor, self.registry, SqlSessionStore(self.store),
            SqlOutcomeStore(self.store), model=self.model if self.reasoning_model else None,
            embed=lambda texts: self.finding.discovery.embedder.embed(texts),
            application_roles=Caller.of().roles, admit_model=admit,
        )  # fmt: skip

    async def reason(
        self,
        prompt: str,
        *,
        session: str | None = None,
        sources: Any = (),
        pins: Mapping[str, str] | None = None,
        budget: int | None = None,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        on_event: OnEvent | None = None,
    ) -> Reasoned:
        """Answer ``prompt`` with the family plugins, ordered by a planner, and record the
        DS027 outcome (docs/reasoning.md). ``sources``: ``{name: text}`` staged for this
        turn; ``pins``: ``{stage: plugin}``; ``budget``: the LLM calls it may make. Who
        calls is as for ``Yard.call``."""
        return await self.reasoning.reason(
            prompt, session=session, sources=sources, pins=pins, budget=budget,
            caller=Caller.of(subject, roles), on_event=on_event,
        )  # fmt: skip

    @part
    def pipelines(self) -> PipelineService:
        """Store, validate and run pipelines; read their traces (docs/pipelines.md)."""
        from plugyard.pipelines.service import PipelineService
        from plugyard.pipelines.store_sql import SqlPipelineStore

        governance = self.governing.governance
        audit = governance.audit if governance is not None else None
        return PipelineService(self.registry, self.execution.executor, SqlPipelineStore(self.store),
                               fanout=self.execution.fanout(), audit=audit)  # fmt: skip
