"""The call path's order is data: the list a yard's executor runs, and where an
application's steps go in it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard import CallContext, CallRequest, Outcome, Result, Settings, StepBase, StepView, Yard
from plugyard.errors import CallError

GOVERNED = (
    "audit", "complete", "scrub",
    "resolve", "policy", "approval", "idempotency", "receipt", "secrets", "identities",
    "bindings", "budget", "validate", "redeem", "host",
)  # fmt: skip


class Named(StepBase):
    def __init__(self, name: str) -> None:
        self.name = name


class Raises(StepBase):
    name = "meter"

    def after(self, call: StepView, result: Result) -> Result:
        raise RuntimeError("the meter's backend is down: secret-token-123")


def yard(**settings: Any) -> Yard:
    return Yard.from_settings(Settings(database=":memory:", **settings))


def stats(opened: Yard, request_id: str = "r1") -> Result:
    context = CallContext(request_id=request_id, subject="alice", roles=("reader",))
    request = CallRequest("text-stats", params={"text": "One. Two words."}, context=context)
    return asyncio.run(opened.executor.call(request))


def test_a_governed_yard_runs_every_governed_step_in_the_stated_order() -> None:
    with yard() as opened:
        assert opened.executor.step_names == GOVERNED


def test_a_yard_without_governance_runs_the_short_list() -> None:
    with yard(governed=False) as opened:
        assert opened.executor.step_names == ("resolve", "budget", "validate")
        assert stats(opened).status == "success"


def test_a_users_step_goes_where_it_is_placed_even_once_the_executor_is_built() -> None:
    with yard() as opened:
        assert stats(opened).status == "success"  # the executor exists now
        opened.add_step(Named("rewrite"), before="policy")
        opened.add_step(Named("cache"))
        opened.add_step(Named("meter"), after="audit")
        opened.add_step(Named("tenant"), before="idempotency")
        names = opened.executor.step_names
        assert names == (
            "audit", "complete", "scrub", "resolve", "meter", "rewrite", "policy",
            "approval", "tenant", "idempotency", "receipt", "secrets", "identities",
            "bindings", "budget", "cache", "validate", "redeem", "host",
        )  # fmt: skip
        assert stats(opened, "r2").status == "success"


def test_a_bare_yard_puts_a_step_named_after_a_governed_one_where_that_would_be() -> None:
    with yard(governed=False) as opened:
        opened.add_step(Named("tenant"), before="idempotency")
        opened.add_step(Named("meter"), after="audit")
        assert opened.executor.step_names == ("resolve", "meter", "tenant", "budget", "validate")


@pytest.mark.parametrize(
    ("where", "name"),
    [({"before": "audit"}, "x"), ({"before": "resolve"}, "x"), ({"after": "nowhere"}, "x"),
     ({"before": "policy", "after": "policy"}, "x"), ({}, "policy")],
)  # fmt: skip
def test_a_step_that_cannot_be_placed_is_refused_and_the_path_is_unchanged(
    where: dict[str, str], name: str
) -> None:
    with yard() as opened:
        with pytest.raises(CallError) as info:
            opened.add_step(Named(name), **where)
        assert info.value.code == "invalid_request"
        assert opened.executor.step_names == GOVERNED


def test_a_failing_users_step_fails_the_call_with_its_own_code_and_is_audited() -> None:
    with yard() as opened:
        opened.add_step(Raises(), after="audit")
        result = stats(opened, "r-meter")
        assert result.status == "error"
        assert result.error is not None and result.error.code == "step_failed"
        assert result.error.details == {"step": "meter", "hook": "after"}
        assert "secret-token-123" not in result.error.message
        governance = opened.governance
        assert governance is not None
        events = [e for e in governance.audit if e.request_id == "r-meter"]
        assert [(e.status, e.error_code) for e in events] == [("error", "step_failed")]


def test_a_cache_step_answers_without_the_plugin_and_only_after_the_policy() -> None:
    class Always(StepBase):
        name = "always"

        def before(self, call: StepView) -> Outcome | None:
            return Outcome(data={"cached": True})

    with yard() as opened:
        opened.add_step(Always())
        assert stats(opened).data == {"cached": True}
        context = CallContext(request_id="r-anon", subject="mallory", roles=())
        denied = asyncio.run(opened.executor.call(CallRequest("text-stats", None, {}, context)))
        assert denied.error is not None and denied.error.code == "permission_denied"
