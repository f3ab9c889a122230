"""The policy in force: none, active or invalid; from a file or the API; next call."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import GovernanceError
from plugyard.policy.base import Subject
from plugyard.policy.book import PolicyBook
from plugyard.store.policies import MemoryPolicyRepository, SqlPolicyRepository
from plugyard.store.store import Store

ALLOW = "subjects: {bob: {}}\ngrants: [{to: 'subject:bob', plugin: calc, effect: allow}]\n"
DENY = "subjects: {bob: {}}\ngrants: [{to: 'subject:bob', plugin: calc, effect: deny}]\n"
BOB = Subject("bob")


def outcome(book: PolicyBook) -> str:
    return book.decide(BOB, "calc", "run", {}).outcome


def test_without_a_policy_everything_is_allowed() -> None:
    book = PolicyBook(MemoryPolicyRepository())
    assert book.state == "none" and outcome(book) == "allow"


def test_a_policy_loaded_through_the_api_applies_to_the_next_call() -> None:
    book = PolicyBook(MemoryPolicyRepository())
    v1 = book.load_text(ALLOW)
    assert outcome(book) == "allow"
    v2 = book.load_text(DENY)
    assert outcome(book) == "deny" and v1 != v2
    assert book.decide(BOB, "calc", "run", {}).policy_version == v2


def test_a_malformed_policy_from_the_api_changes_nothing() -> None:
    book = PolicyBook(MemoryPolicyRepository())
    book.load_text(ALLOW)
    with pytest.raises(GovernanceError) as caught:
        book.load_text("grants: [{to: nobody}]")
    assert caught.value.code == "policy_invalid"
    assert outcome(book) == "allow"


def test_an_unreadable_or_corrupt_policy_file_denies_everything(tmp_path: Path) -> None:
    missing = PolicyBook(MemoryPolicyRepository(), file=tmp_path / "absent.yaml")
    assert missing.state == "invalid" and outcome(missing) == "deny"
    corrupt = tmp_path / "policy.yaml"
    corrupt.write_text("grants: [{to: 'role:x', effect: sometimes}]")
    book = PolicyBook(MemoryPolicyRepository(), file=corrupt)
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
    repo = MemoryPolicyRepository()
    repo.add("p-x", {"grants": "not a list"}, None, None, 0.0)
    book = PolicyBook(repo)
    assert book.state == "invalid" and outcome(book) == "deny"


def test_listings_show_only_what_the_subject_may_call() -> None:
    book = PolicyBook(MemoryPolicyRepository())
    book.load_text(ALLOW)
    assert book.visible(BOB, "calc", "run")
    assert not book.visible(BOB, "mail", "send")
    assert not book.visible(Subject("eve"), "calc", "run")
