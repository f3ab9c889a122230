"""The DS003 runtime context of every family call, and the structured payload."""

from __future__ import annotations

import asyncio
import logging

from plugyard.llm import OpenAIChatModel
from plugyard.llm.testing import FakeModelServer

from .lab import Lab, basic


def test_every_family_call_gets_the_runtime_context() -> None:
    lab = basic(Lab())
    lab.model = lambda: OpenAIChatModel("http://127.0.0.1:9/v1", "m")
    lab.add(
        "gs-a",
        "gs",
        lab_solver := {"solve": {"status": "success", "responseMarkdown": "Paris."}},
        model_roles=["goal-solver"],
    )
    del lab_solver
    service = lab.service
    session = asyncio.run(service.create_session(kb_id="kb-1", kb_name="Atlas"))
    answer = asyncio.run(service.reason("Capital of France?", session=session.id, budget=3))
    calls = [c for c in lab.calls if c.operation in ("detect_seeds", "retrieve", "solve")]
    for call in calls:
        ctx = call.context
        assert ctx["requestId"] == answer.request_id
        assert ctx["session"]["id"] == session.id and ctx["session"]["kbName"] == "Atlas"
        assert ctx["conversation"] == []
        assert ctx["budgets"]["llm_calls"] == 3 and ctx["budgets"]["requestLLMBudget"] == 3
        assert isinstance(ctx["logger"], logging.Logger)
        assert ctx["parser"] is not None and ctx["decomposer"] is not None
        assert "hookType" not in ctx
    solver = next(c for c in calls if c.operation == "solve").context
    assert solver["modelSettings"]["roles"] == {
        "goal-solver": {
            "model": "openai:http://127.0.0.1:9/v1:m",
            "temperature": 0.0,
            "maxTokens": 512,
        }
    }


def test_the_context_is_a_copy_a_plugin_cannot_change_for_the_next() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))

    def vandal(input: dict, ctx: dict) -> dict:
        ctx["session"]["id"] = "hijacked"
        ctx["budgets"]["llm_calls"] = 10**6
        ctx["subject"] = "admin"
        return {"status": "insufficient", "sufficient": False, "error": None}

    lab.add("kb-a", "kb", {"retrieve": vandal})
    lab.reason(budget=2)
    after = next(c.context for c in lab.calls if c.plugin == "kb-b")
    assert after["budgets"]["llm_calls"] == 2 and after["subject"] is None
    assert after["session"]["id"] != "hijacked"


def test_the_parser_in_the_context_reads_sop_as_the_core_does() -> None:
    lab = basic(Lab())
    seen: list = []

    def solver(input: dict, ctx: dict) -> dict:
        seen.append(ctx["parser"].admit('@i1 intent define "a word"')["intents"][0]["act"])
        seen.append(ctx["decomposer"].split("Who built it? Why not here?"))
        return {"status": "success", "responseMarkdown": "ok"}

    lab.add("gs-a", "gs", {"solve": solver})
    lab.reason()
    assert seen == ["define", ["Who built it?", "Why not here?"]]


def test_no_model_means_none_in_the_settings() -> None:
    lab = basic(Lab())
    lab.reason()
    assert lab.calls[0].context["modelSettings"] == {"model": None, "roles": {}}
    assert FakeModelServer  # the scripted server is what LLM-backed tests use
