"""The governance repositories keep one contract on SQLite, PostgreSQL and in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.governance.audit.chain import ChainedAudit
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
