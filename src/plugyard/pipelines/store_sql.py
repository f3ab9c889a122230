"""The pipeline store on the store's database (SQLite or PostgreSQL, same tables)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from plugyard.pipelines.store import StoredPipeline, document_hash
from plugyard.pipelines.trace import PipelineRun, TraceEntry
from plugyard.store.schema import pipeline_runs, pipelines
from plugyard.store.store import Store


class SqlPipelineStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    def put(self, pipeline: StoredPipeline) -> StoredPipeline:
        now = self._store.clock()
        values = {
            "description": pipeline.description,
            "dialect": pipeline.dialect,
            "document": dict(pipeline.document),
            "content_hash": document_hash(pipeline.document),
            "updated_at": now,
            "saved_by": pipeline.saved_by,
        }
        with self._store.writing() as conn:
            inserted = conn.execute(
                _insert(conn, pipelines)
                .values(name=pipeline.name, created_at=now, **values)
                .on_conflict_do_nothing(index_elements=["name"])
                .returning(pipelines.c.name)
            ).first()
            if inserted is None:
                conn.execute(
                    update(pipelines).where(pipelines.c.name == pipeline.name).values(values)
                )
            row = conn.execute(select(pipelines).where(pipelines.c.name == pipeline.name)).one()
        return _pipeline(row)

    def get(self, name: str) -> StoredPipeline | None:
        with self._store.reading() as conn:
            row = conn.execute(select(pipelines).where(pipelines.c.name == name)).first()
        return _pipeline(row) if row is not None else None

    def list(self) -> tuple[StoredPipeline, ...]:
        with self._store.reading() as conn:
            rows = conn.execute(select(pipelines).order_by(pipelines.c.name)).all()
        return tuple(_pipeline(r) for r in rows)

    def delete(self, name: str) -> bool:
        with self._store.writing() as conn:
            gone = conn.execute(delete(pipelines).where(pipelines.c.name == name))
        return bool(gone.rowcount)

    def save_run(self, run: PipelineRun) -> None:
        with self._store.writing() as conn:
            conn.execute(
                _insert(conn, pipeline_runs)
                .values(
                    id=run.run_id,
                    pipeline=run.pipeline,
                    status=run.status,
                    request_id=run.request_id,
                    subject=run.subject,
                    error=run.error,
                    trace=[entry.to_dict() for entry in run.trace],
                    started_at=run.started_at,
                    duration_ms=run.duration_ms,
                    stored=run.stored,
                )
                .on_conflict_do_nothing(index_elements=["id"])
            )

    def get_run(self, run_id: str) -> PipelineRun | None:
        with self._store.reading() as conn:
            row = conn.execute(select(pipeline_runs).where(pipeline_runs.c.id == run_id)).first()
        return _run(row) if row is not None else None

    def runs(
        self, pipeline: str | None = None, limit: int = 50, *, subject: str | None = None
    ) -> tuple[PipelineRun, ...]:
        query = select(pipeline_runs).order_by(
            pipeline_runs.c.started_at.desc(), pipeline_runs.c.id.desc()
        )
        if pipeline is not None:
            query = query.where(pipeline_runs.c.pipeline == pipeline)
        if subject is not None:
            query = query.where(pipeline_runs.c.subject == subject)
        with self._store.reading() as conn:
            rows = conn.execute(query.limit(max(limit, 0))).all()
        return tuple(_run(r) for r in rows)


def _insert(conn: Connection, table: Any) -> Any:
    return pg_insert(table) if conn.dialect.name == "postgresql" else sqlite_insert(table)


def _pipeline(row: Row[Any]) -> StoredPipeline:
    data = row._mapping
    return StoredPipeline(
        name=data["name"],
        document=data["document"],
        dialect=data["dialect"],
        description=data["description"],
        content_hash=data["content_hash"],
        created_at=data["created_at"],
        updated_at=data["updated_at"],
        saved_by=data["saved_by"],
    )


def _run(row: Row[Any]) -> PipelineRun:
    data = row._mapping
    return PipelineRun(
        run_id=data["id"],
        pipeline=data["pipeline"],
        status=data["status"],
        context={},
        trace=tuple(TraceEntry.from_dict(entry) for entry in data["trace"]),
        request_id=data["request_id"],
        subject=data["subject"],
        error=data["error"],
        started_at=data["started_at"],
        duration_ms=data["duration_ms"],
        stored=data["stored"],
    )
