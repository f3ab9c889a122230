"""The DS003 runtime context every family call of a request receives.

``requestId``, ``session``, ``conversation``, ``modelSettings`` (from the model layer, by
the plugin's ``modelRoles``), ``logger``, ``budgets``, and ``parser``/``decomposer``
(``null`` in the source-text hook, which has ``hookType`` and ``kbRepositoryManager``
instead). JSON members travel to wrapper plugins too; ``logger``, ``llm``, ``embed``,
``parser`` and ``decomposer`` are callback surfaces for in-process code only. The
context is read-only to plugins: each call gets its own copy, and who calls (subject,
roles) comes from the request, never from what a plugin or a client wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugyard.reasoning.bridge import ModelBridge, ModelSource, model_settings
from plugyard.reasoning.session import Session
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext

#: Texts → vectors (discovery's embedder), for KB plugins that retrieve by meaning.
Embed = Callable[[Sequence[str]], Any]


@dataclass(frozen=True, slots=True)
class RuntimeContext:
    """What one request lends its family calls."""

    request_id: str
    subject: str | None = None
    roles: tuple[str, ...] = ()
    session: Session | None = None
    model: ModelSource | None = None
    embed: Embed | None = None
    #: In-process helpers for the loop's calls (the SOP reader, the decomposer).
    helpers: Mapping[str, Any] = field(default_factory=dict)
    budget_limit: int = 0

    def call(
        self, plugin: RegisteredPlugin, remaining: int, *, hook: str | None = None
    ) -> tuple[CallContext, ModelBridge]:
        """The context of one call of ``plugin`` and the bridge it may chat through."""
        descriptor = plugin.descriptor
        allowed = (
            remaining
            if descriptor.max_llm_calls is None
            else min(remaining, descriptor.max_llm_calls)
        )
        bridge = ModelBridge(self.model, allowed, descriptor.model_roles)
        session = self.session
        extra: dict[str, Any] = {
            "requestId": self.request_id,
            "conversation": [t.to_dict() for t in session.conversation] if session else [],
            "modelSettings": _settings(self.model, descriptor.model_roles),
            "parser": None,
            "decomposer": None,
        }
        callbacks: dict[str, Any] = {
            "llm": bridge,
            "logger": logging.getLogger(f"plugyard.reasoning.{plugin.id}"),
        }
        if self.embed is not None:
            callbacks["embed"] = self.embed
        if hook is None:
            callbacks.update(self.helpers)  # parser and decomposer, in the loop only
        else:
            extra["hookType"] = hook
            extra["kbRepositoryManager"] = _repository(session)
        budgets = {
            "llm_calls": remaining,
            "llmCalls": remaining,
            "requestLLMBudget": self.budget_limit,
        }
        context = CallContext(
            request_id=self.request_id,
            subject=self.subject,
            roles=self.roles,
            budgets=budgets,
            session=session.view() if session else {},
            extra=extra,
            callbacks=callbacks,
        )
        return context, bridge


def _settings(model: ModelSource | None, roles: Sequence[str]) -> dict[str, Any]:
    try:
        return model_settings(model, roles)
    except Exception:  # a model that cannot even be named is reported by its first call
        return {"model": None, "roles": {}}


def _repository(session: Session | None) -> dict[str, Any] | None:
    """The source-text hook's view of where the session's knowledge is kept."""
    if session is None:
        return None
    return {
        "sessionId": session.id,
        "kbId": session.kb_id,
        "kbName": session.kb_name,
        "workspaceStats": session.stats(),
    }
