"""The bundled MRP family plugins answer their DS027 status objects."""

from __future__ import annotations

import asyncio

from bundled_plugins import RUNTIME, plugin_target, run

from plugyard.runtimes.base import CallContext, Outcome

UNITS = [
    {"title": "Paris", "text": "Paris is the capital of France and its largest city."},
    {"title": "Rome", "text": "Rome is the capital of Italy."},
    {"title": "Cheese", "text": "France makes many cheeses."},
]


def test_the_kb_retrieves_the_units_sharing_words_with_the_request() -> None:
    outcome = run("kb-lexical", "retrieve", prompt="What is the capital of France?", context=UNITS)
    assert outcome.status == "success"
    chosen = outcome.data["resolvedIntents"][0]["units"]
    assert chosen[0]["title"] == "Paris"
    assert outcome.data["retrievalTrace"]["totalKUsConsidered"] == 3


def test_the_kb_answers_insufficient_when_nothing_matches() -> None:
    outcome = run("kb-lexical", "retrieve", prompt="quantum chromodynamics", context=UNITS)
    assert (outcome.status, outcome.data["sufficient"]) == ("insufficient", False)


def test_the_kb_searches_source_text_offered_in_the_same_session() -> None:
    target = plugin_target("kb-lexical")
    session = CallContext(request_id="r", session={"id": "s1"})
    other = CallContext(request_id="r", session={"id": "s2"})

    async def scenario() -> tuple[Outcome, Outcome, Outcome]:
        ops = {op.id: op for op in target.descriptor.operations}
        offered = await RUNTIME.invoke(
            target, ops["on_source_text"],
            {"text": "Zanzibar exports cloves.", "sourceName": "notes"}, session, None,
        )  # fmt: skip
        ask = {"prompt": "What does Zanzibar export?"}
        mine = await RUNTIME.invoke(target, ops["retrieve"], ask, session, None)
        theirs = await RUNTIME.invoke(target, ops["retrieve"], ask, other, None)
        assert isinstance(offered, Outcome) and isinstance(mine, Outcome)
        assert isinstance(theirs, Outcome)
        return offered, mine, theirs

    offered, mine, theirs = asyncio.run(scenario())
    assert offered.status == "accepted"
    assert mine.status == "success"
    assert theirs.status == "insufficient"


def test_the_validator_accepts_a_grounded_answer_and_rejects_others() -> None:
    evidence = [{"text": "Paris is the capital of France."}]
    grounded = run("val-grounded", "validate", prompt="q", context=evidence,
                   answer="The capital of France is Paris.")  # fmt: skip
    assert (grounded.status, grounded.data["verdict"]) == ("accepted", "accepted")
    invented = run("val-grounded", "validate", prompt="q", context=evidence,
                   responseMarkdown="Lyon hosts the national parliament buildings.")  # fmt: skip
    assert invented.status == "rejected"
    empty = run("val-grounded", "validate", prompt="q", context=evidence, answer="  ")
    assert empty.status == "rejected"
