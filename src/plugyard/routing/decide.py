"""Which candidate a step calls: the model's verdict on each, fused with retrieval's.

A small local model asked to write the whole choice at once (``generate``) picks the
right operation clearly less often than retrieval's own first match (bench/RESULTS.md,
"Routing"). Asked one short question per candidate — does this operation fit the
request, yes or no — its evidence is faint but is about the candidate rather than its
place in a list. So the default method (``scored``) reads the log-odds of "yes" from one
generated token per candidate and adds them, weighted, to retrieval's fused score; the
best sum is the operation, and only its arguments are then asked for under its own
parameter schema. Both are on scales that hold across requests (retrieval's score is
z-scored over the catalog, a log-odds is a log-odds), so one weight serves every
request. Weighted as low as the embedded model's evidence deserves, the verdicts only
reorder candidates whose retrieval scores are close; a better judge would earn a
larger weight, measured again (bench/labs/ROUTING_LAB.md).

``generate`` is the earlier method: one constrained answer over every candidate.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from plugyard.llm import ChatAnswer, Message
from plugyard.routing.choice import Candidate
from plugyard.routing.prompt import one_line

Method = Literal["scored", "generate"]
METHODS: tuple[Method, ...] = ("scored", "generate")
DEFAULT_METHOD: Method = "scored"

#: How much one unit of the model's log-odds counts against one unit of retrieval's
#: score: among the best on two MetaTool development samples (bench/labs/ROUTING_LAB.md),
#: checked on Seal-Tools (bench/RESULTS.md, "Routing").
MODEL_WEIGHT = 0.1
#: Alternatives read for the verdict token: "yes" and "no" are among the likeliest.
TOP_LOGPROBS = 20
#: A verdict the model's answer did not contain (a server without logprobs, or neither
#: word among the alternatives) counts as this log-probability.
ABSENT_LOGPROB = -20.0

VERDICT_SYSTEM = "Answer yes or no."
_YES = frozenset({"yes"})
_NO = frozenset({"no"})

Ask = Callable[[tuple[Message, ...]], Awaitable[ChatAnswer]]


@dataclass(frozen=True, slots=True)
class Judged:
    """A candidate with the model's log-odds that it fits and the fused score."""

    candidate: Candidate
    verdict: float
    fused: float


def verdict_messages(message: str, candidate: Candidate) -> tuple[Message, ...]:
    """The one question asked about one candidate. The request comes before the
    operation, so consecutive questions share their prefix and a local model's prompt
    cache computes only the operation's lines again."""
    name = candidate.operation.name or candidate.name or candidate.plugin_id
    summary = one_line(candidate.operation.description or candidate.description)
    user = (
        f"Request: {message}\n\nTool: {name}: {summary}\n\n"
        "Can this tool handle the request? Answer yes or no."
    )
    return (Message("system", VERDICT_SYSTEM), Message("user", user))


def read_verdict(answer: ChatAnswer) -> float:
    """log P(yes) − log P(no) over the first token's alternatives (case and spaces
    ignored); 0 when the answer carries no alternatives at all."""
    if not answer.top_logprobs or not answer.top_logprobs[0]:
        return 0.0
    yes: list[float] = []
    no: list[float] = []
    for alternative in answer.top_logprobs[0]:
        word = alternative.token.strip().lower()
        if word in _YES:
            yes.append(alternative.logprob)
        elif word in _NO:
            no.append(alternative.logprob)
    return _logsumexp(yes) - _logsumexp(no)


def fuse(candidates: Sequence[Candidate], verdicts: Sequence[float],
         weight: float = MODEL_WEIGHT) -> tuple[Judged, ...]:  # fmt: skip
    """The candidates best first by retrieval score + ``weight`` × verdict; ties keep
    retrieval's order (a stable sort), so a model that says nothing changes nothing."""
    judged = [Judged(c, v, c.score + weight * v) for c, v in zip(candidates, verdicts, strict=True)]
    return tuple(sorted(judged, key=lambda j: -j.fused))


async def judge(message: str, candidates: Sequence[Candidate], ask: Ask,
                weight: float = MODEL_WEIGHT) -> tuple[Judged, ...]:  # fmt: skip
    """Ask about each candidate in turn (one token each) and fuse the verdicts."""
    verdicts = [read_verdict(await ask(verdict_messages(message, c))) for c in candidates]
    return fuse(candidates, verdicts, weight)


def verdict_options() -> Mapping[str, Any]:
    """The request options of a verdict question: one token, its alternatives."""
    return {"max_tokens": 1, "top_logprobs": TOP_LOGPROBS}


def _logsumexp(values: Sequence[float]) -> float:
    if not values:
        return ABSENT_LOGPROB
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
