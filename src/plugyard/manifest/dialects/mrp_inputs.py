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
    decomposed = [_decomposed(index + 1, intent, message) for index, intent in enumerate(intents)]
    profiles = [_profile(d) for d in decomposed]
    turn = [_unit(index, unit) for index, unit in enumerate(units)]
    added: dict[str, Any] = {
        "currentMessage": message,
        "originalMessage": message,
        "historyForPrompt": [],
        "sessionId": None,
        "systemPrompt": None,
        "requestedModel": None,
        "sessionModel": None,
        "decomposedIntents": decomposed,
        "intentGroups": [
            {"groupNumber": d["groupNumber"], "intent": d["intent"]} for d in decomposed
        ],
        "contextProfiles": profiles,
        "currentTurnUnits": turn,
        "resolvedIntents": [
            {
                "intentRef": d["groupNumber"],
                "intentGroup": d,
                "decomposed": d,
                "contextProfile": p,
                "currentTurnContextUnits": turn,
                "sessionUnits": [],
                "kbUnits": [],
                "strategyUnits": [],
            }
            for d, p in zip(decomposed, profiles, strict=True)
        ],
        "guidanceUnits": list(payload.get("guidance") or []),
        "explicitSelections": {},
        "sessionPreferences": {},
    }
    return {**added, **payload}


def _decomposed(number: int, intent: Mapping[str, Any], message: str) -> dict[str, Any]:
    """An intent as MRP-VM's decomposer shapes one (act, intent, target, …)."""
    text = str(intent.get("text") or message)
    target = " ".join(text.split()[1:]).rstrip(".?!")
    act = intent.get("act") if isinstance(intent.get("act"), str) else "explain"
    return {
        "groupNumber": number, "act": act, "intent": text, "target": target,
        "criteria": [], "evidence": [], "explicitContext": None, "outputType": None,
    }  # fmt: skip


def _profile(decomposed: Mapping[str, Any]) -> dict[str, Any]:
    """The retrieval profile MRP-VM derives for an intent: its query terms and act."""
    words = (w.strip(".,;:!?()\"'").lower() for w in str(decomposed["target"]).split())
    terms = list(dict.fromkeys(w for w in words if len(w) > 2))
    return {
        "intentGroupNumber": decomposed["groupNumber"], "neededRoles": [],
        "queryText": decomposed["target"], "queryTerms": terms, "focusTerms": [],
        "focusPhrases": [], "actBoost": decomposed["act"], "maxResults": 10,
    }  # fmt: skip


def _unit(index: int, unit: Mapping[str, Any]) -> dict[str, Any]:
    """A DS003 context unit as one of MRP-VM's current-turn units."""
    text = str(unit.get("text") or "")
    return {
        "id": str(unit.get("title") or f"turn-unit-{index}"),
        "unitId": str(unit.get("title") or f"turn-unit-{index}"),
        "text": text, "claim": text, "role": unit.get("role"),
        "source": unit.get("sourceLink"),
    }  # fmt: skip


def reads_mrp_members(descriptor: PluginDescriptor) -> bool:
    """Whether the plugin is MRP-VM JavaScript run in plugyard's Node host."""
    runtime = descriptor.runtime
    return isinstance(runtime, SubprocessRuntime) and NODE_HOST in runtime.args
