"""The policy in force: starter, active or invalid; from a file or the API; next call."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard.errors import GovernanceError
from plugyard.governance.policy.book import PolicyBook
from plugyard.store.policies import SqlPolicyRepository
from plugyard.store.store import Store
from plugyard.types import Caller

ALLOW = "subjects: {bob: {}}\ngrants: [{to: 'subject:bob', plugin: calc, effect: allow}]\n"
DENY = "subjects: {bob: {}}\ngrants: [{to: 'subject:bob', plugin: calc, effect: deny}]\n"
BOB = Caller("bob")


def outcome(book: PolicyBook) -> str:
    return book.decide(BOB, "calc", "run", {}).outcome


def starter_facts(plugin_id: str, operation: str) -> tuple[tuple[str, ...], bool, str] | None:
    effects = {"read": ((), False, "read"), "write": ((), False, "write")}
    return effects.get(operation, ((), True, "read") if operation == "approve-me" else None)


@pytest.mark.parametrize(
    ("roles", "operation", "expected"),
    [
        ((), "read", "deny"),  # a key with no role may call nothing
        (("analyst",), "read", "deny"),  # nor may a role the starter does not know
        (("reader",), "read", "allow"),
        (("reader",), "write", "deny"),  # write and destructive operations need a grant
        (("reader",), "unknown-op", "deny"),  # an unknown operation counts as destructive
        (("admin",), "write", "allow"),
        (("admin",), "unknown-op", "allow"),
        (("admin",), "approve-me", "allow_with_approval"),  # requires_approval still holds
    ],
)
def test_without_a_loaded_policy_the_starter_denies_by_default(
    roles: tuple[str, ...], operation: str, expected: str
) -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), facts=starter_facts)
    decision = book.decide(Caller("bob", roles), "calc", operation, {})
    assert book.state == "starter" and book.version == "starter"
    assert decision.outcome == expected and decision.policy_version == "starter"


def test_the_starter_lets_admins_approve_and_nobody_else() -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), facts=starter_facts)
    assert book.may_approve(Caller("root", ("admin",)), "calc", "approve-me").outcome == "allow"
    assert book.may_approve(Caller("bob", ("reader",)), "calc", "approve-me").outcome == "deny"


def test_a_loaded_policy_replaces_the_starter() -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), facts=starter_facts)
    book.load_text(ALLOW)
    assert book.state == "active" and outcome(book) == "allow"
    assert book.decide(Caller("eve", ("admin",)), "calc", "write", {}).outcome == "deny"


def test_a_policy_loaded_through_the_api_applies_to_the_next_call() -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")))
    v1 = book.load_text(ALLOW)
    assert outcome(book) == "allow"
    v2 = book.load_text(DENY)
    assert outcome(book) == "deny" and v1 != v2
    assert book.decide(BOB, "calc", "run", {}).policy_version == v2


def test_a_malformed_policy_from_the_api_changes_nothing() -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")))
    book.load_text(ALLOW)
    with pytest.raises(GovernanceError) as caught:
        book.load_text("grants: [{to: nobody}]")
    assert caught.value.code == "policy_invalid"
    assert outcome(book) == "allow"


def test_an_unreadable_or_corrupt_policy_file_denies_everything(tmp_path: Path) -> None:
    missing = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), file=tmp_path / "absent.yaml")
    assert missing.state == "invalid" and outcome(missing) == "deny"
    corrupt = tmp_path / "policy.yaml"
    corrupt.write_text("grants: [{to: 'role:x', effect: sometimes}]")
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), file=corrupt)
    assert outcome(book) == "deny"
    assert book.decide(BOB, "calc", "run", {}).policy_version == "invalid"


def test_a_policy_file_is_stored_and_survives_a_restart(tmp_path: Path) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(DENY)
    store = Store.open(str(tmp_path / "p.db"))
    assert outcome(PolicyBook(SqlPolicyRepository(store), file=file)) == "deny"
    assert outcome(PolicyBook(SqlPolicyRepository(store))) == "deny"


def test_another_replica_sees_a_new_policy_after_its_refresh(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "p.db"))
    one = PolicyBook(SqlPolicyRepository(store), refresh_s=3600)
    two = PolicyBook(SqlPolicyRepository(store), refresh_s=0)
    one.load_text(DENY)
    assert outcome(two) == "deny"
    two.load_text(ALLOW)
    assert outcome(one) == "deny"  # within its refresh interval
    one.refresh()
    assert outcome(one) == "allow"


def test_a_corrupt_stored_policy_denies_everything() -> None:
    repo = SqlPolicyRepository(Store.open(":memory:"))
    repo.add("p-x", {"grants": "not a list"}, None, None, 0.0)
    book = PolicyBook(repo)
    assert book.state == "invalid" and outcome(book) == "deny"


def test_listings_show_only_what_the_subject_may_call() -> None:
    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")))
    book.load_text(ALLOW)
    assert book.visible(BOB, "calc", "run")
    assert not book.visible(BOB, "mail", "send")
    assert not book.visible(Caller("eve"), "calc", "run")


@given(
    roles=st.lists(st.sampled_from(["admin", "reader", "writer", "guest", ""]), max_size=3),
    effect=st.sampled_from(["read", "write", "destructive"]),
    approval=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_the_starter_allows_exactly_admins_and_readers_of_reads(
    roles: list[str], effect: str, approval: bool
) -> None:
    """The starter's answer depends only on the roles and the operation's effect."""

    def facts(plugin_id: str, operation: str) -> tuple[tuple[str, ...], bool, str]:
        return (), approval, effect

    book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), facts=facts)
    held = tuple(r for r in roles if r)
    decision = book.decide(Caller("bob", held), "calc", "run", {})
    allowed = "admin" in held or ("reader" in held and effect == "read")
    if not allowed:
        assert decision.outcome == "deny"
    else:
        assert decision.outcome == ("allow_with_approval" if approval else "allow")
