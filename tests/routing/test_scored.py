"""The default decision in the flow: a yes/no verdict per candidate fused with
retrieval, then the chosen operation's arguments; and ``dry_run``, which stops at the
plan."""

from __future__ import annotations

import asyncio
from typing import Any

from plugyard.discovery.query import Filters, Match
from plugyard.llm.testing import FakeModelServer, Reply, Script
from plugyard.routing import Answer, Router
from plugyard.yard import Yard

from .conftest import choose, everything, judging, model, router, user_prompt
from .plugins import FETCHED, SIDE_EFFECTS

NOTES_FIRST = ("r-notes", "r-ref", "r-wallet")


def ask(yard: Yard, script: Script, message: str, **options: Any
        ) -> tuple[Answer, FakeModelServer]:  # fmt: skip
    async def run() -> tuple[Answer, FakeModelServer]:
        async with FakeModelServer(script) as fake:
            flow = router(yard, NOTES_FIRST)
            return await flow.ask(message, llm=model(fake), k=3, **options), fake

    return asyncio.run(run())


def fetch_notes(body: dict[str, Any]) -> Reply:
    return choose("r-notes", "fetch", topic="garden")


def test_the_verdicts_choose_and_only_the_chosen_operation_is_asked_for_arguments(
    yard: Yard,
) -> None:
    # Retrieval puts r-notes first; the model says the second candidate fits.
    script = judging(lambda tool, _: tool.startswith("r-ref:"),
                     lambda body: choose("r-ref", "lookup", code="EUR"))  # fmt: skip
    answer, fake = ask(yard, script, "what is the EUR code?")
    assert answer.status == "answered", answer.to_dict()
    (step,) = answer.steps
    assert step.choice is not None and step.choice["plugin"] == "r-ref"
    assert [r.plugin for r in step.retrieved] == list(NOTES_FIRST)  # retrieval's order kept
    assert all(r.verdict is not None for r in step.retrieved)
    verdicts, arguments = fake.requests[:3], fake.requests[3]
    assert all(v["max_tokens"] == 1 and v["logprobs"] for v in verdicts)
    branches = arguments["response_format"]["json_schema"]["schema"]["anyOf"]
    assert len(branches) == 2  # the chosen operation and "none"
    assert branches[0]["properties"]["plugin"] == {"const": "r-ref"}
    assert answer.cost["llm_calls"] == 4 and step.llm_calls == 4


def test_a_model_without_logprobs_leaves_retrievals_first(yard: Yard) -> None:
    def script(body: dict[str, Any]) -> Reply:
        return Reply.text("yes") if body.get("logprobs") else fetch_notes(body)

    answer, _ = ask(yard, script, "my notes on the garden")
    assert answer.status == "answered" and FETCHED == ["garden"]


def test_an_argument_answer_naming_another_candidate_is_refused(yard: Yard) -> None:
    # The verdicts chose r-notes; the answer names r-ref, which was not offered for it.
    script = judging(lambda tool, _: tool.startswith("r-notes:"),
                     lambda body: choose("r-ref", "lookup", code="EUR"))  # fmt: skip
    answer, fake = ask(yard, script, "my notes")
    assert answer.status == "error" and answer.error is not None
    assert answer.error.code == "llm_invalid_answer" and not FETCHED
    assert "Your previous answer was refused" in user_prompt(fake.requests[-1])


def test_none_while_filling_the_arguments_is_none(yard: Yard) -> None:
    script = judging(lambda tool, _: False, lambda body: Reply.json({"none": True}))
    answer, _ = ask(yard, script, "write me a poem")
    assert answer.status == "none" and answer.steps[0].status == "none"


def test_a_model_that_is_down_while_judging_is_llm_unavailable(yard: Yard) -> None:
    async def run() -> Answer:
        async with FakeModelServer([]) as fake:
            llm = model(fake)
        return await router(yard, NOTES_FIRST).ask("my notes", llm=llm, k=3)

    answer = asyncio.run(run())
    assert answer.error is not None and answer.error.code == "llm_unavailable"
    assert answer.steps[0].choice is None and not answer.cost["tool_calls"]


def test_dry_run_plans_the_call_and_makes_none(yard: Yard) -> None:
    # A transfer needing approval: planned, so not even an approval request is filed.
    script = judging(lambda tool, _: tool.startswith("r-wallet:"),
                     lambda body: choose("r-wallet", "transfer", amount=5, to="bob"))  # fmt: skip
    answer, _ = ask(yard, script, "send bob 5", dry_run=True)
    assert answer.status == "planned", answer.to_dict()
    assert answer.data == {"plugin": "r-wallet", "operation": "transfer",
                           "arguments": {"amount": 5, "to": "bob"}, "final": True}  # fmt: skip
    assert answer.steps[0].status == "planned" and answer.pending is None
    assert not SIDE_EFFECTS and answer.cost["tool_calls"] == 0


def test_dry_run_with_the_generate_method(yard: Yard) -> None:
    answer, fake = ask(yard, [choose("r-notes", "fetch", topic="x")], "notes on x",
                       dry_run=True, method="generate")  # fmt: skip
    assert answer.status == "planned" and len(fake.requests) == 1 and not FETCHED


def test_an_unknown_method_is_refused_before_anything_runs(yard: Yard) -> None:
    answer, fake = ask(yard, [], "notes", method="vote")
    assert answer.error is not None and answer.error.code == "invalid_request"
    assert not fake.requests


def test_an_operation_without_parameters_is_planned_without_asking_for_arguments(
    yard: Yard,
) -> None:
    def search(query: str, k: int, filters: Filters) -> list[Match]:
        plugin = yard.registry.find("sqlite-query")
        assert plugin is not None
        return [Match(plugin, "list_databases", 2.0, "test"), *everything(yard)(query, k, filters)]

    async def run() -> tuple[Answer, FakeModelServer]:
        script = judging(lambda tool, _: "databases" in tool, fetch_notes)
        async with FakeModelServer(script) as fake:
            flow = Router(yard.executor, search, yard.rights, lambda: yard.llm)
            return await flow.ask("which databases?", llm=model(fake), k=2, dry_run=True), fake

    answer, fake = asyncio.run(run())
    assert answer.status == "planned" and answer.data["operation"] == "list_databases"
    assert answer.data["arguments"] == {}
    assert all(body.get("logprobs") for body in fake.requests)  # verdicts only
