"""The input members MRP-VM's engine hands each family method, named as its plugins read
them, derived from plugyard's DS003 payload (``{prompt, context, intents, …}``).

MRP-VM's own plugins never read ``prompt``: a seed detector reads ``currentMessage``, a
KB plugin ``decomposedIntents``/``contextProfiles``/``currentTurnUnits``, a goal solver
``resolvedIntents``, a validator ``originalMessage`` and ``responseMarkdown``, a planner
``explicitSelections`` and the rest. These are added beside the payload — never over a
member the payload already has — so a plugin of either kind reads what it expects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugyard.manifest.dialects.mrp_fields import NODE_HOST
from plugyard.manifest.model import PluginDescriptor, SubprocessRuntime


def mrp_members(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` with MRP-VM's member names added (the payload's own values win)."""
    prompt = payload.get("prompt")
    message = prompt if isinstance(prompt, str) else ""
    units = [u for u in payload.get("context") or () if isinstance(u, Mapping)]
    raw = payload.get("intents")
    intents = [i for i in (raw if isinstance(raw, list) else ()) if isinstance(i, Mapping)]
    decomposed = [
        {
            "groupNumber": index + 1,
            "intent": str(intent.get("text") or message),
            "act": intent.get("act"),
            "explicitContext": "",
        }
        for index, intent in enumerate(intents)
    ]
    added: dict[str, Any] = {
        "currentMessage": message,
        "originalMessage": message,
        "historyForPrompt": [],
        "systemPrompt": None,
        "requestedModel": None,
        "sessionModel": None,
        "decomposedIntents": decomposed,
        "intentGroups": [
            {"groupNumber": d["groupNumber"], "intent": d["intent"]} for d in decomposed
        ],
        "contextProfiles": [{"neededRoles": []} for _ in decomposed],
        "currentTurnUnits": [dict(u) for u in units],
        "resolvedIntents": [
            {"intentRef": d["groupNumber"], "intentGroup": d, "currentTurnContextUnits": []}
            for d in decomposed
        ],
        "guidanceUnits": list(payload.get("guidance") or []),
        "explicitSelections": {},
        "sessionPreferences": {},
    }
    return {**added, **payload}


def reads_mrp_members(descriptor: PluginDescriptor) -> bool:
    """Whether the plugin is MRP-VM JavaScript run in plugyard's Node host."""
    runtime = descriptor.runtime
    return isinstance(runtime, SubprocessRuntime) and NODE_HOST in runtime.args
