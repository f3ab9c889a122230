"""Sessions, sources and outcome records on the store's database (SQLite or PostgreSQL,
the same tables). A session changes inside one write transaction, its row locked on
PostgreSQL (``FOR UPDATE``) and the database on SQLite (``BEGIN IMMEDIATE``), so two
requests of one session never lose each other's turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import Row, insert, select

from plugyard.reasoning.record import OutcomeRecord
from plugyard.reasoning.session import Change, Session, Source, Turn
from plugyard.reasoning.units import dicts, units_of
from plugyard.store.schema import reasoning_outcomes, reasoning_sessions, reasoning_sources
from plugyard.store.store import Store


class SqlSessionStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    def create(self, session: Session) -> Session:
        now = self._store.clock()
        stored = replace(session, created_at=now, updated_at=now)
        with self._store.writing() as conn:
            conn.execute(insert(reasoning_sessions).values(id=session.id, **_values(stored)))
        return stored

    def get(self, session_id: str) -> Session | None:
        query = select(reasoning_sessions).where(reasoning_sessions.c.id == session_id)
        with self._store.reading() as conn:
            row = conn.execute(query).first()
        return _session(row) if row is not None else None

    def update(self, session_id: str, change: Change) -> Session | None:
        table = reasoning_sessions
        query = select(table).where(table.c.id == session_id)
        with self._store.writing() as conn:
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()
            row = conn.execute(query).first()
            if row is None:
                return None
            found = _session(row)
            stored = replace(change(found), id=found.id, updated_at=self._store.clock())
            values = _values(stored)
            values.pop("created_at")
            conn.execute(table.update().where(table.c.id == session_id).values(values))
        return stored

    def sessions(self, subject: str | None, limit: int = 50) -> tuple[Session, ...]:
        table = reasoning_sessions
        query = select(table).order_by(table.c.updated_at.desc(), table.c.id.desc())
        if subject is not None:
            query = query.where(table.c.subject == subject)
        with self._store.reading() as conn:
            rows = conn.execute(query.limit(max(limit, 0))).all()
        return tuple(_session(r) for r in rows)

    def add_source(self, source: Source) -> Source:
        stored = replace(source, created_at=self._store.clock())
        with self._store.writing() as conn:
            conn.execute(
                insert(reasoning_sources).values(
                    id=source.id,
                    session_id=source.session_id,
                    name=source.name,
                    sha256=source.sha256,
                    bytes=source.bytes,
                    units=dicts(source.units),
                    created_at=stored.created_at,
                )
            )
        return stored

    def sources(self, session_id: str) -> tuple[Source, ...]:
        table = reasoning_sources
        query = (
            select(table)
            .where(table.c.session_id == session_id)
            .order_by(table.c.created_at, table.c.id)
        )
        with self._store.reading() as conn:
            rows = conn.execute(query).all()
        return tuple(_source(r) for r in rows)


class SqlOutcomeStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    def save(self, record: OutcomeRecord) -> OutcomeRecord:
        stored = replace(record, recorded_at=record.recorded_at or self._store.clock())
        with self._store.writing() as conn:
            conn.execute(
                insert(reasoning_outcomes).values(
                    request_id=record.request_id,
                    session_id=record.session_id,
                    subject=record.subject,
                    planner_plugin_id=record.planner_plugin_id,
                    final_status=record.final_status,
                    recorded_at=stored.recorded_at,
                    record=stored.to_dict(),
                )
            )
        return stored

    def get(self, request_id: str) -> OutcomeRecord | None:
        query = select(reasoning_outcomes).where(reasoning_outcomes.c.request_id == request_id)
        with self._store.reading() as conn:
            row = conn.execute(query).first()
        return _record(row) if row is not None else None

    def records(
        self, *, subject: str | None = None, session_id: str | None = None, limit: int = 50
    ) -> tuple[OutcomeRecord, ...]:
        table = reasoning_outcomes
        query = select(table).order_by(table.c.recorded_at.desc(), table.c.request_id.desc())
        if subject is not None:
            query = query.where(table.c.subject == subject)
        if session_id is not None:
            query = query.where(table.c.session_id == session_id)
        with self._store.reading() as conn:
            rows = conn.execute(query.limit(max(limit, 0))).all()
        return tuple(_record(r) for r in rows)


def _values(session: Session) -> dict[str, Any]:
    return {
        "subject": session.subject,
        "kb_id": session.kb_id,
        "kb_name": session.kb_name,
        "preferences": dict(session.preferences),
        "staged": dicts(session.staged),
        "committed": dicts(session.committed),
        "conversation": [t.to_dict() for t in session.conversation],
        "created_at": session.created_at,
        "updated_at": session.updated_at,
    }


def _session(row: Row[Any]) -> Session:
    data = row._mapping
    return Session(
        id=data["id"],
        subject=data["subject"],
        kb_id=data["kb_id"],
        kb_name=data["kb_name"],
        preferences={str(k): str(v) for k, v in (data["preferences"] or {}).items()},
        staged=units_of(data["staged"]),
        committed=units_of(data["committed"]),
        conversation=tuple(Turn.of(t) for t in data["conversation"] or () if isinstance(t, dict)),
        created_at=data["created_at"],
        updated_at=data["updated_at"],
    )


def _source(row: Row[Any]) -> Source:
    data = row._mapping
    return Source(
        id=data["id"],
        session_id=data["session_id"],
        name=data["name"],
        sha256=data["sha256"],
        bytes=data["bytes"],
        units=units_of(data["units"]),
        created_at=data["created_at"],
    )


def _record(row: Row[Any]) -> OutcomeRecord:
    data = row._mapping
    return replace(
        OutcomeRecord.of(data["record"], data["subject"]), recorded_at=data["recorded_at"]
    )
