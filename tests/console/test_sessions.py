"""Console sessions: only a hash of the id is stored, they expire, receipts are bounded."""

from __future__ import annotations

from plugyard.console.sessions import MAX_PENDING, NAMESPACE, OWNER, SessionStore
from plugyard.store.kv import SqlKeyValueRepository
from plugyard.store.store import Store


def test_the_store_never_holds_the_session_id() -> None:
    kv = SqlKeyValueRepository(Store.open(":memory:"))
    session_id, session = SessionStore(kv).open("abc123", "ann")
    stored = kv.items(OWNER, NAMESPACE)
    assert session_id not in stored and len(stored) == 1
    assert session_id not in str(stored) and session.csrf in str(stored)


def test_a_session_expires() -> None:
    now = [1000.0]
    store = SessionStore(
        SqlKeyValueRepository(Store.open(":memory:")), ttl_s=10, clock=lambda: now[0]
    )
    session_id, _ = store.open("abc123", "ann")
    assert store.get(session_id) is not None
    now[0] += 11
    assert store.get(session_id) is None
    assert store.get("made-up") is None and store.get(None) is None


def test_expired_sessions_are_swept_at_the_next_login() -> None:
    kv = SqlKeyValueRepository(Store.open(":memory:"))
    now = [0.0]
    store = SessionStore(kv, ttl_s=10, clock=lambda: now[0])
    store.open("k1", "ann")
    now[0] = 100.0
    store.open("k2", "bob")
    assert len(kv.items(OWNER, NAMESPACE)) == 1


def test_receipts_kept_per_session_are_bounded() -> None:
    store = SessionStore(SqlKeyValueRepository(Store.open(":memory:")))
    session_id, session = store.open("k", "ann")
    for index in range(MAX_PENDING + 5):
        store.remember(session_id, session, f"a{index}", {"receipt": "r"})
        found = store.get(session_id)
        assert found is not None
        session = found
    assert len(session.pending) == MAX_PENDING and "a0" not in session.pending
