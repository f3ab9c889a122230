"""The rights of management actions: one table, and one rule for whose records a
subject sees."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.errors import ERROR_CODES
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right, RightRefused
from plugyard.types import Caller

subjects = st.one_of(st.none(), st.text(min_size=1, max_size=8))  # never empty
roles = st.lists(st.sampled_from(["admin", "reader", "clerk", "", "Admin"]), max_size=3)
holders = st.builds(Caller, subjects, roles.map(tuple))


@given(holders, st.sampled_from(list(Right)))
def test_a_right_is_held_by_the_admin_role_only(who: Caller, right: Right) -> None:
    assert rights.holds(who, right) == ("admin" in who.roles)


@given(holders, subjects)
def test_the_listing_scope_and_the_single_record_rule_agree(who: Caller, owner: str | None) -> None:
    scope = rights.owner_scope(who)
    assert rights.may_see(who, owner) == (scope is None or (owner is not None and scope == owner))


@given(holders)
def test_a_record_of_no_subject_is_only_for_those_who_see_every_owner(who: Caller) -> None:
    assert rights.may_see(who, None) == rights.holds(who, Right.OTHERS_RECORDS)


def test_a_refusal_names_the_right_with_the_documented_code() -> None:
    with pytest.raises(RightRefused) as caught:
        rights.require(Caller("bob", ("reader",)), Right.PIPELINE_SAVE)
    assert caught.value.code == "permission_denied" and "permission_denied" in ERROR_CODES
    assert caught.value.details == {"right": "pipeline.save"}


def test_the_application_acts_as_an_admin_and_a_user_with_its_own_roles() -> None:
    assert Caller.of(None, None).roles == ("admin",)
    assert Caller.of("bob", None).roles == ()
    assert Caller.of(None, ["reader"]).roles == ("reader",)
    assert rights.owner_scope(Caller.of(None, ["reader"])) == rights.NOBODY
