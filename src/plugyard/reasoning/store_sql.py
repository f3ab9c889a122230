"""Sessions, sources and outcome records on the store's database (SQLite, a file or in
memory, or PostgreSQL; the same tables). A session changes inside one write transaction,
its row locked on PostgreSQL (``FOR UPDATE``) and the database on SQLite (``BEGIN
IMMEDIATE``), so two requests of one session never lose each other's turn."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from plugyard.reasoning.record import OutcomeRecord
from plugyard.reasoning.session import Change, Session, Source, Turn
from plugyard.reasoning.units import dicts, units_of
from plugyard.store.rawdb import RawDb, json_document, json_in, matching, raw_db, time_in, time_out

if TYPE_CHECKING:
    from plugyard.store.store import Store

_SESSION = (
    "id, subject, kb_id, kb_name, preferences, staged, committed, conversation, "
    "created_at, updated_at"
)
_SOURCE = "id, session_id, name, sha256, bytes, units, created_at"
_OUTCOME = "subject, recorded_at, record"


class SqlSessionStore:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = store.clock

    def create(self, session: Session) -> Session:
        now = self._clock()
        stored = replace(session, created_at=now, updated_at=now)
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO reasoning_sessions ({_SESSION}) VALUES (:id, :subject, :kb_id, "
                ":kb_name, :preferences, :staged, :committed, :conversation, :created_at, "
                ":updated_at)",
                self._values(stored),
            )
        return stored

    def get(self, session_id: str) -> Session | None:
        with self._db.read() as tx:
            found = tx.one(
                f"SELECT {_SESSION} FROM reasoning_sessions WHERE id = :id", {"id": session_id}
            )
        return _session(found) if found is not None else None

    def update(self, session_id: str, change: Change) -> Session | None:
        lock = " FOR UPDATE" if self._db.postgres else ""
        with self._db.write() as tx:
            found = tx.one(
                f"SELECT {_SESSION} FROM reasoning_sessions WHERE id = :id{lock}",
                {"id": session_id},
            )
            if found is None:
                return None
            current = _session(found)
            stored = replace(change(current), id=current.id, updated_at=self._clock())
            tx.execute(
                "UPDATE reasoning_sessions SET subject = :subject, kb_id = :kb_id, "
                "kb_name = :kb_name, preferences = :preferences, staged = :staged, "
                "committed = :committed, conversation = :conversation, "
                "updated_at = :updated_at WHERE id = :id",
                self._values(stored),
            )
        return stored

    def sessions(self, subject: str | None, limit: int = 50) -> tuple[Session, ...]:
        where = "WHERE subject = :subject " if subject is not None else ""
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_SESSION} FROM reasoning_sessions {where}"
                "ORDER BY updated_at DESC, id DESC LIMIT :n",
                {"subject": subject, "n": max(limit, 0)},
            )
        return tuple(_session(r) for r in rows)

    def add_source(self, source: Source) -> Source:
        stored = replace(source, created_at=self._clock())
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO reasoning_sources ({_SOURCE}) VALUES (:id, :session_id, :name, "
                ":sha256, :bytes, :units, :created_at)",
                {
                    "id": stored.id,
                    "session_id": stored.session_id,
                    "name": stored.name,
                    "sha256": stored.sha256,
                    "bytes": stored.bytes,
                    "units": json_in(dicts(stored.units)),
                    "created_at": time_in(stored.created_at, self._db.postgres),
                },
            )
        return stored

    def sources(self, session_id: str) -> tuple[Source, ...]:
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_SOURCE} FROM reasoning_sources WHERE session_id = :id "
                "ORDER BY created_at, id",
                {"id": session_id},
            )
        return tuple(_source(r) for r in rows)

    def _values(self, session: Session) -> dict[str, Any]:
        postgres = self._db.postgres
        return {
            "id": session.id,
            "subject": session.subject,
            "kb_id": session.kb_id,
            "kb_name": session.kb_name,
            "preferences": json_in(dict(session.preferences)),
            "staged": json_in(dicts(session.staged)),
            "committed": json_in(dicts(session.committed)),
            "conversation": json_in([t.to_dict() for t in session.conversation]),
            "created_at": time_in(session.created_at, postgres),
            "updated_at": time_in(session.updated_at, postgres),
        }


class SqlOutcomeStore:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = store.clock

    def save(self, record: OutcomeRecord) -> OutcomeRecord:
        stored = replace(record, recorded_at=record.recorded_at or self._clock())
        with self._db.write() as tx:
            tx.execute(
                "INSERT INTO reasoning_outcomes (request_id, session_id, subject, "
                "planner_plugin_id, final_status, recorded_at, record) VALUES (:request_id, "
                ":session_id, :subject, :planner, :status, :recorded_at, :record)",
                {
                    "request_id": stored.request_id,
                    "session_id": stored.session_id,
                    "subject": stored.subject,
                    "planner": stored.planner_plugin_id,
                    "status": stored.final_status,
                    "recorded_at": time_in(stored.recorded_at, self._db.postgres),
                    "record": json_in(stored.to_dict()),
                },
            )
        return stored

    def get(self, request_id: str) -> OutcomeRecord | None:
        with self._db.read() as tx:
            found = tx.one(
                f"SELECT {_OUTCOME} FROM reasoning_outcomes WHERE request_id = :id",
                {"id": request_id},
            )
        return _record(found) if found is not None else None

    def records(
        self, *, subject: str | None = None, session_id: str | None = None, limit: int = 50
    ) -> tuple[OutcomeRecord, ...]:
        condition, values = matching(subject=subject, session_id=session_id)
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_OUTCOME} FROM reasoning_outcomes{condition} "
                "ORDER BY recorded_at DESC, request_id DESC LIMIT :n",
                {**values, "n": max(limit, 0)},
            )
        return tuple(_record(r) for r in rows)


def _session(found: tuple[Any, ...]) -> Session:
    key, subject, kb_id, kb_name, preferences, staged, committed, turns, created, updated = found
    return Session(
        id=key,
        subject=subject,
        kb_id=kb_id,
        kb_name=kb_name,
        preferences={str(k): str(v) for k, v in (json_document(preferences) or {}).items()},
        staged=units_of(json_document(staged)),
        committed=units_of(json_document(committed)),
        conversation=tuple(Turn.of(t) for t in json_document(turns) or () if isinstance(t, dict)),
        created_at=time_out(created),
        updated_at=time_out(updated),
    )


def _source(found: tuple[Any, ...]) -> Source:
    key, session_id, name, sha256, size, units, created = found
    return Source(
        id=key,
        session_id=session_id,
        name=name,
        sha256=sha256,
        bytes=size,
        units=units_of(json_document(units)),
        created_at=time_out(created),
    )


def _record(found: tuple[Any, ...]) -> OutcomeRecord:
    subject, recorded_at, record = found
    return replace(
        OutcomeRecord.of(json_document(record), subject), recorded_at=time_out(recorded_at)
    )
