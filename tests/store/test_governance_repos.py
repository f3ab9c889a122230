"""The governance repositories keep one contract on SQLite, PostgreSQL and in memory."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.audit.event import AuditEvent
from plugyard.store import approvals, audit, feeds, idempotency, kv, policies, secrets
from plugyard.store.rawdb import raw_db
from plugyard.store.store import Store

from .conftest import backend_url


@pytest.fixture(params=["sqlite", "postgresql", "sqlite in memory"])
def repos(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    # In memory is how a yard or a governance without a database keeps its rows.
    memory = request.param == "sqlite in memory"
    urls = iter([":memory:"]) if memory else backend_url(request, request.param, tmp_path)
    store = Store.open(next(urls))
    yield {
        "idem": idempotency.SqlIdempotencyRepository(store),
        "approvals": approvals.SqlApprovalRepository(store),
        "audit": audit.SqlAuditRepository(store),
        "secrets": secrets.SqlSecretRepository(store),
        "feeds": feeds.SqlFeedRepository(store),
        "kv": kv.SqlKeyValueRepository(store),
        "policies": policies.SqlPolicyRepository(store),
    }
    raw_db(store).close()
    store.close()
    next(urls, None)  # the PostgreSQL database is emptied


def test_an_idempotency_key_is_claimed_once_then_completed(repos: dict[str, Any]) -> None:
    repo = repos["idem"]
    row = idempotency.IdempotencyRow("k", "d", "bob", "p", "o", "claimed", 1.0)
    assert repo.claim(row) is None
    held = repo.claim(row)
    assert held is not None and held.state == "claimed"
    repo.completion("k", "done", {"status": "success", "data": [1, "é"]}, 2.0)(None)
    done = repo.get("k")
    assert done.state == "done" and done.result == {"status": "success", "data": [1, "é"]}
    assert not repo.take_over("k", 10.0, 11.0)
    repo.claim(idempotency.IdempotencyRow("r", "d", None, "p", "o", "claimed", 1.0))
    assert repo.take_over("r", 5.0, 6.0) and not repo.take_over("r", 5.0, 7.0)
    repo.release("r")
    assert repo.get("r") is None


def test_a_stored_result_reads_back_as_it_was_given(tmp_path: Path) -> None:
    # NaN has no JSON literal (PostgreSQL's JSONB refuses it): SQLite's text keeps it.
    repo = idempotency.SqlIdempotencyRepository(Store.open(str(tmp_path / "r.db")))
    results = {
        "plain": {"status": "success", "data": {"n": [1, 2.5e-7, "é"]}, "cost": {"ms": 0.01}},
        "void": {"status": "success", "data": None},
        "nan": {"status": "success", "data": [math.inf], "cost": {"ms": math.nan}},
        "surrogate": {"status": "success", "data": "a\ud800"},
        "keys": {"status": "success", "data": {1: "one", None: "none"}},
    }
    for key, result in results.items():
        repo.claim(idempotency.IdempotencyRow(key, "d", None, "p", "o", "claimed", 1.0))
        repo.complete(key, "done", result, 2.0)
    assert repo.get("plain").result == results["plain"]
    assert repo.get("void").result == results["void"]
    nan = repo.get("nan").result
    assert nan["data"] == [math.inf] and math.isnan(nan["cost"]["ms"])
    assert repo.get("surrogate").result == results["surrogate"]
    assert repo.get("keys").result["data"] == {"1": "one", "null": "none"}


def test_audit_events_chain_onto_a_head_another_writer_moved(tmp_path: Path) -> None:
    """Two writers (two processes' stores) on one file: each chains onto the head it last
    saw, and finds it moved; an event's extra statement commits with its event."""
    database = str(tmp_path / "a.db")
    ours, theirs = Store.open(database), Store.open(database)
    mine = ChainedAudit(audit.SqlAuditRepository(ours), b"k" * 32)
    other = ChainedAudit(audit.SqlAuditRepository(theirs), b"k" * 32)
    keys = idempotency.SqlIdempotencyRepository(ours)
    for i in range(3):
        keys.claim(idempotency.IdempotencyRow(f"k{i}", "d", None, "p", "o", "claimed", 1.0))
    mine.append("call", status="success", request_id="first")  # this writer knows the head
    for i in range(3):
        other.append("call", status="success", request_id=f"theirs {i}")
        extra = keys.completion(f"k{i}", "done", {"status": "success", "data": i}, 2.0)
        event = AuditEvent(
            f"ours {i}", None, "p", "o", "0" * 64, "allow", "success", None, 1.0, 0.1
        )
        mine.emit(event, extra)
    assert [keys.get(f"k{i}").result["data"] for i in range(3)] == [0, 1, 2]
    seqs = [(r.seq, r.request_id) for r in mine.tail(10)]
    assert seqs == [(1, "first"), (2, "theirs 0"), (3, "ours 0"), (4, "theirs 1"),
                    (5, "ours 1"), (6, "theirs 2"), (7, "ours 2")]  # fmt: skip
    assert mine.verify().ok and other.verify().ok


def test_an_approval_is_decided_once_and_used_once(repos: dict[str, Any]) -> None:
    repo = repos["approvals"]
    row = approvals.ApprovalRow("a1", "h1", "d", "bob", "p", "o", {"x": 1}, "pending", "v",
                                1.0, 100.0)  # fmt: skip
    repo.create(row)
    assert [r.id for r in repo.list("pending")] == ["a1"]
    assert not repo.consume("h1", 2.0)
    assert repo.decide("a1", "approved", "alice", 2.0, None)
    assert not repo.decide("a1", "rejected", "alice", 2.0, None)
    assert repo.consume("h1", 3.0) and not repo.consume("h1", 3.0)
    used = repo.by_receipt("h1")
    assert used.state == "used" and used.decided_by == "alice" and used.preview == {"x": 1}


def test_audit_rows_chain_in_order(repos: dict[str, Any]) -> None:
    chain = ChainedAudit(repos["audit"], b"k" * 32)
    for i in range(5):
        chain.append("call", status="success", request_id=str(i), detail={"n": i} if i else None)
    assert [r.seq for r in chain.tail(2)] == [4, 5]
    assert chain.verify(page=2).ok


def test_secrets_rows_are_replaced_listed_and_deleted(repos: dict[str, Any]) -> None:
    repo = repos["secrets"]
    repo.put(secrets.SecretRow("system", "", "t", b"n" * 12, b"c1", "k", 1.0, 1.0))
    repo.put(secrets.SecretRow("system", "", "t", b"m" * 12, b"c2", "k", 2.0, 2.0))
    got = repo.get("system", "", "t")
    assert got.ciphertext == b"c2" and got.created_at == 1.0
    assert [r.name for r in repo.list()] == ["t"]
    assert repo.delete("system", "", "t") and not repo.delete("system", "", "t")


def test_feeds_are_due_claimed_once_and_recorded(repos: dict[str, Any]) -> None:
    repo = repos["feeds"]
    repo.create(feeds.FeedRow("f1", "bob", ("r",), "p", "o", {"q": 1}, 60.0, None, True,
                              10.0, 1.0))  # fmt: skip
    assert [f.id for f in repo.due(10.0)] == ["f1"] and repo.due(9.0) == []
    assert repo.claim("f1", 10.0, 70.0) and not repo.claim("f1", 10.0, 70.0)
    repo.record("f1", 11.0, "success", {"data": 1}, "c1")
    row = repo.get("f1")
    assert (row.runs, row.next_cursor, row.roles, row.params) == (1, "c1", ("r",), {"q": 1})
    assert repo.set_enabled("f1", False) and repo.due(100.0) == []


def test_values_and_policies_round_trip(repos: dict[str, Any]) -> None:
    store = repos["kv"]
    store.put("p", "cursor", "inbox", {"at": 5}, 1.0)
    store.put("p", "cursor", "inbox", {"at": 6}, 2.0)
    assert store.get("p", "cursor", "inbox") == {"at": 6}
    assert store.items("p", "cursor") == {"inbox": {"at": 6}}
    book = repos["policies"]
    assert book.latest() is None and book.latest_seq() == 0
    book.add("v1", {"grants": []}, "file", "alice", 1.0)
    assert book.latest().version == "v1" and book.latest_seq() == 1
