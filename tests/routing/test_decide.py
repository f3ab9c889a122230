"""The scored decision: one yes/no question per candidate, its log-odds fused with
retrieval's score."""

from __future__ import annotations

import asyncio
import math

from plugyard.llm import ChatAnswer, Message, TokenLogprob, Usage
from plugyard.manifest.model import Operation
from plugyard.routing.choice import Candidate
from plugyard.routing.decide import ABSENT_LOGPROB, fuse, judge, read_verdict, verdict_messages


def _candidate(plugin: str, score: float) -> Candidate:
    return Candidate(plugin, Operation(id="run", description=f"does {plugin}"), score, name=plugin)


def _answer(alternatives: dict[str, float]) -> ChatAnswer:
    tokens = tuple(TokenLogprob(t, lp) for t, lp in alternatives.items())
    return ChatAnswer("", "length", Usage(), 1.0, "m", top_logprobs=(tokens,) if tokens else ())


def test_a_verdict_is_the_log_odds_of_yes_over_case_and_spaces() -> None:
    alternatives = {"Yes": math.log(0.3), " yes": math.log(0.3), "no": math.log(0.2)}
    verdict = read_verdict(_answer(alternatives))
    assert math.isclose(verdict, math.log(0.6) - math.log(0.2))


def test_a_missing_word_counts_as_very_unlikely_and_no_alternatives_as_no_opinion() -> None:
    assert read_verdict(_answer({"yes": -0.5, "maybe": -1.0})) == -0.5 - ABSENT_LOGPROB
    assert read_verdict(_answer({})) == 0.0


def test_fusion_reorders_only_when_the_verdicts_outweigh_the_score_gap() -> None:
    first, second = _candidate("a", 3.0), _candidate("b", 2.5)
    assert [j.candidate for j in fuse([first, second], [0.0, 6.0], 0.1)] == [second, first]
    assert [j.candidate for j in fuse([first, second], [0.0, 2.0], 0.1)] == [first, second]


def test_a_model_without_an_opinion_keeps_retrievals_order() -> None:
    tied = [_candidate("a", 1.0), _candidate("b", 1.0), _candidate("c", 0.5)]
    assert [j.candidate.plugin_id for j in fuse(tied, [0.0, 0.0, 0.0])] == ["a", "b", "c"]


def test_each_candidate_is_asked_once_with_the_request_first() -> None:
    asked: list[tuple[Message, ...]] = []

    async def ask(messages: tuple[Message, ...]) -> ChatAnswer:
        asked.append(messages)
        fits = "weather" in messages[-1].content.split("Tool:")[1]
        return _answer({"yes": -0.1, "no": -3.0} if fits else {"yes": -3.0, "no": -0.1})

    candidates = [_candidate("calculator", 2.0), _candidate("weather", 1.9)]
    judged = asyncio.run(judge("rain in Oslo tomorrow?", candidates, ask))
    assert judged[0].candidate.plugin_id == "weather" and judged[0].verdict > 0
    assert len(asked) == 2
    # The same prefix for every candidate: a local model's prompt cache reuses it.
    user = [m[-1].content for m in asked]
    assert all(u.startswith("Request: rain in Oslo tomorrow?") for u in user)
    assert verdict_messages("x", candidates[0])[0].role == "system"
