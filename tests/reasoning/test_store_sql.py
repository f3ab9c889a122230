"""Sessions, sources and records on a SQLite file, SQLite in memory and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from plugyard.reasoning.record import OutcomeRecord, StageEntry
from plugyard.reasoning.session import Session, Source, Turn, committed, staged
from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
from plugyard.reasoning.units import Unit
from plugyard.runtimes.base import ErrorInfo
from plugyard.store.store import Store
from store.conftest import BACKENDS, backend_url


@pytest.fixture(params=[*BACKENDS, "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        with Store.open(":memory:") as opened:
            yield opened
        return
    for url in backend_url(request, request.param, tmp_path):
        opened = Store.open(url)
        yield opened
        opened.close()


def test_a_session_round_trips(store: Store) -> None:
    sessions = SqlSessionStore(store)
    unit = Unit(
        "Paris is the capital.", "Paris", "doc#1", {"id": "u1", "phaseScopes": ["gs-plugin"]}
    )
    created = sessions.create(Session("s1", "ana", "kb-1", "Atlas", {"kb": "kb-a"}, (unit,)))
    found = sessions.get("s1")
    assert found == created
    assert found is not None and found.created_at is not None and found.created_at.tzinfo
    assert sessions.get("nope") is None


def test_a_change_is_applied_whole_or_not_at_all(store: Store) -> None:
    sessions = SqlSessionStore(store)
    sessions.create(Session("s1", "ana"))

    def failing(session: Session) -> Session:
        staged(session, [Unit("half")])
        raise RuntimeError("the request failed midway")

    with pytest.raises(RuntimeError):
        sessions.update("s1", failing)
    assert sessions.get("s1") == sessions.get("s1")
    found = sessions.get("s1")
    assert found is not None and found.staged == ()
    turn = Turn("r1", "q", "a", "success")
    assert sessions.update("nope", lambda s: s) is None
    done = sessions.update("s1", lambda s: committed(s, [Unit("kept")], turn))
    assert done is not None and [u.text for u in done.committed] == ["kept"]
    assert sessions.get("s1") == done


def test_concurrent_turns_of_one_session_both_land(store: Store) -> None:
    sessions = SqlSessionStore(store)
    sessions.create(Session("s1"))
    barrier = threading.Barrier(4)

    def turn(index: int) -> None:
        barrier.wait()
        sessions.update(
            "s1",
            lambda s: committed(s, [Unit(f"u{index}")], Turn(str(index), "q", None, "success")),
        )

    threads = [threading.Thread(target=turn, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = sessions.get("s1")
    assert found is not None and len(found.conversation) == 4 and len(found.committed) == 4


def test_sessions_and_sources_are_listed(store: Store) -> None:
    sessions = SqlSessionStore(store)
    sessions.create(Session("s1", "ana"))
    sessions.create(Session("s2", "bob"))
    assert [s.id for s in sessions.sessions("ana")] == ["s1"] and sessions.sessions("eve") == ()
    assert {s.id for s in sessions.sessions(None)} == {"s1", "s2"}
    sessions.add_source(Source("src1", "s1", "notes", "0" * 64, 12, (Unit("a"),)))
    assert [(s.id, [u.text for u in s.units]) for s in sessions.sources("s1")] == [("src1", ["a"])]
    assert sessions.sources("s2") == ()


def test_records_round_trip_and_list_newest_first(store: Store) -> None:
    outcomes = SqlOutcomeStore(store)
    entry = StageEntry("plan-a", "kb", "kb-a", "success", 1.25, 0, True, None, None)
    first = outcomes.save(
        OutcomeRecord(
            "r1", "plan-a", "success", "s1", ("plan-a",), (entry,), "answered", subject="ana"
        )
    )
    second = outcomes.save(
        OutcomeRecord(
            "r2",
            "plan-a",
            "failure",
            None,
            ("plan-a",),
            error=ErrorInfo("stage_exhausted", "none"),
            subject="bob",
        )
    )
    assert outcomes.get("r1") == first and outcomes.get("r2") == second
    assert [r.request_id for r in outcomes.records()] == ["r2", "r1"]
    assert [r.request_id for r in outcomes.records(subject="ana")] == ["r1"]
    assert [r.request_id for r in outcomes.records(session_id="s1")] == ["r1"]
    assert outcomes.get("r1").to_dict()["stages"][0]["sufficient"] is True  # type: ignore[union-attr]
    assert outcomes.get("nope") is None


def test_rows_written_through_sqlalchemy_read_back_alike(store: Store) -> None:
    from sqlalchemy import insert, select

    from plugyard.store.schema import reasoning_sessions

    when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2)))
    row = {"id": "old", "subject": "ana", "preferences": {"kb": "kb-a"}, "staged": [],
           "committed": [{"text": "kept"}], "conversation": [], "created_at": when,
           "updated_at": when}  # fmt: skip
    with store.writing() as conn:
        conn.execute(insert(reasoning_sessions).values(row))
    sessions = SqlSessionStore(store)
    found = sessions.get("old")
    assert found is not None and found.created_at == when and found.created_at.tzinfo == UTC
    assert [u.text for u in found.committed] == ["kept"] and found.preferences == {"kb": "kb-a"}
    sessions.create(Session("new"))
    query = select(reasoning_sessions.c.created_at).where(reasoning_sessions.c.id == "new")
    with store.reading() as conn:
        written = conn.execute(query).scalar_one()
    assert written == sessions.get("new").created_at  # type: ignore[union-attr]
    assert [s.id for s in sessions.sessions("ana")] == ["old"]
