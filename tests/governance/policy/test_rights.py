"""The rights of management actions: one table, and one rule for whose records a
subject sees."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.errors import ERROR_CODES
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Acting, Right, RightRefused

subjects = st.one_of(st.none(), st.text(min_size=1, max_size=8))  # never empty
roles = st.lists(st.sampled_from(["admin", "reader", "clerk", "", "Admin"]), max_size=3)
holders = st.builds(Acting, subjects, roles.map(tuple))


@given(holders, st.sampled_from(list(Right)))
def test_a_right_is_held_by_the_admin_role_only(who: Acting, right: Right) -> None:
    assert rights.holds(who, right) == ("admin" in who.roles)


@given(holders, subjects)
def test_the_listing_scope_and_the_single_record_rule_agree(who: Acting, owner: str | None) -> None:
    scope = rights.owner_scope(who)
    assert rights.may_see(who, owner) == (scope is None or (owner is not None and scope == owner))


@given(holders)
def test_a_record_of_no_subject_is_only_for_those_who_see_every_owner(who: Acting) -> None:
    assert rights.may_see(who, None) == rights.holds(who, Right.OTHERS_RECORDS)


def test_a_refusal_names_the_right_with_the_documented_code() -> None:
    with pytest.raises(RightRefused) as caught:
        rights.require(Acting("bob", ("reader",)), Right.PIPELINE_SAVE)
    assert caught.value.code == "permission_denied" and "permission_denied" in ERROR_CODES
    assert caught.value.details == {"right": "pipeline.save"}


def test_the_application_acts_as_an_admin_and_a_user_with_its_own_roles() -> None:
    assert Acting.of(None, None).roles == ("admin",)
    assert Acting.of("bob", None).roles == ()
    assert Acting.of(None, ["reader"]).roles == ("reader",)
    assert rights.owner_scope(Acting.of(None, ["reader"])) == rights.NOBODY
