"""The request's LLM budget: plugins skipped before they run, real use deducted, and the
model bridge holding every call to its plugin's bound."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard.llm import OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply

from .lab import Lab, basic, planned, solved


def llm_solver(lab: Lab, plugin_id: str, *, max_calls: int, reports: int, answer: str) -> None:
    lab.add(
        plugin_id,
        "gs",
        {"solve": solved(answer, llm_calls=reports)},
        uses_llm=True,
        max_llm_calls=max_calls,
    )


def test_a_plugin_that_may_need_more_calls_than_are_left_is_skipped_unrun() -> None:
    lab = basic(Lab(), gs=("gs-big", "gs-a"))
    llm_solver(lab, "gs-big", max_calls=5, reports=5, answer="expensive")
    answer = lab.reason(budget=3)
    assert lab.ran("solve") == ["gs-a"]
    entry = next(s for s in answer.record.stages if s.plugin_id == "gs-big")
    assert (entry.status, entry.llm_calls) == ("skipped-budget", 0)


def test_what_each_call_reports_using_is_deducted() -> None:
    lab = basic(Lab(), gs=("gs-1", "gs-2", "gs-3", "gs-4"))
    for plugin_id, declared, used in (("gs-1", 3, 1), ("gs-2", 2, 2)):
        lab.add(
            plugin_id,
            "gs",
            {"solve": solved(status="no-context", llm_calls=used)},
            uses_llm=True,
            max_llm_calls=declared,
        )
    llm_solver(lab, "gs-3", max_calls=2, reports=2, answer="third")
    llm_solver(lab, "gs-4", max_calls=1, reports=1, answer="fourth")
    answer = lab.reason(budget=4)
    # 4 left; gs-1 may use 3 but used 1 (3 left); gs-2 used 2 (1 left): gs-3 no longer
    # fits, gs-4 does. Deducting what was declared would have skipped gs-2 too.
    assert lab.ran("solve") == ["gs-1", "gs-2", "gs-4"]
    assert [
        (s.plugin_id, s.status, s.llm_calls)
        for s in answer.record.stages
        if s.stage == "goal-solver"
    ] == [
        ("gs-1", "insufficient", 1),
        ("gs-2", "insufficient", 2),
        ("gs-3", "skipped-budget", 0),
        ("gs-4", "success", 1),
    ]
    assert answer.llm_calls == 4 and answer.answer == "fourth"


def test_a_budget_of_zero_runs_only_plugins_that_use_no_model() -> None:
    lab = basic(Lab(), gs=("gs-llm", "gs-a"))
    llm_solver(lab, "gs-llm", max_calls=1, reports=1, answer="model")
    assert lab.reason(budget=0).answer == "Paris."
    only_llm = basic(Lab(), gs=("gs-llm",))
    llm_solver(only_llm, "gs-llm", max_calls=1, reports=1, answer="model")
    answer = only_llm.reason(budget=0)
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "budget_exceeded"
    assert only_llm.ran("solve") == []


def chatty(times: int) -> Any:
    async def solve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        for _ in range(times):
            await ctx["llm"].chat("hello", role="goal-solver")
        return solved("talked", llm_calls=0)  # under-reports on purpose

    return solve


def with_model(lab: Lab, replies: int) -> FakeModelServer:
    fake = FakeModelServer([Reply.text("hi")] * replies)
    lab.model = lambda: OpenAIChatModel(fake.base_url, "fake", retry=RetryPolicy(attempts=1))
    return fake


def test_calls_through_the_bridge_are_counted_even_when_the_plugin_says_none() -> None:
    lab = basic(Lab(), gs=("gs-chat",))
    lab.add(
        "gs-chat",
        "gs",
        {"solve": chatty(2)},
        uses_llm=True,
        max_llm_calls=2,
        model_roles=["goal-solver"],
    )

    async def scenario() -> Any:
        fake = with_model(lab, 2)
        async with fake:
            return await lab.service.reason("Capital of France?", budget=5), fake

    answer, fake = asyncio.run(scenario())
    assert answer.status == "answered" and len(fake.requests) == 2
    entry = next(s for s in answer.record.stages if s.plugin_id == "gs-chat")
    assert (entry.llm_calls, entry.model) == (2, "fake-model")
    assert entry.model_role == "goal-solver"


@pytest.mark.parametrize(("declared", "budget"), [(1, 5), (3, 1)])
def test_the_bridge_refuses_calls_past_the_plugins_bound_or_the_budget(
    declared: int, budget: int
) -> None:
    lab = basic(Lab(), gs=("gs-chat", "gs-a"))
    lab.add("gs-chat", "gs", {"solve": chatty(3)}, uses_llm=True, max_llm_calls=declared)
    lab.add("plan-a", "plan", {"build_plan": planned(["kb-a"], ["gs-chat", "gs-a"])})

    async def scenario() -> Any:
        fake = with_model(lab, 3)
        async with fake:
            return await lab.service.reason("Capital of France?", budget=budget), fake

    if declared > budget:  # the executor skips it before it runs
        answer, fake = asyncio.run(scenario())
        assert len(fake.requests) == 0
        return
    answer, fake = asyncio.run(scenario())
    assert len(fake.requests) == 1  # the second call was refused before it was made
    failed = next(e for e in answer.trace if e.data.get("pluginId") == "gs-chat")
    assert failed.data["error"]["code"] == "budget_exceeded"
    assert answer.answer == "Paris."
