"""The pipeline store on the store's database (SQLite, a file or in memory, or PostgreSQL;
the same tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plugyard.pipelines.store import StoredPipeline, document_hash
from plugyard.pipelines.trace import PipelineRun, TraceEntry
from plugyard.store.rawdb import RawDb, json_document, json_in, matching, raw_db, time_in, time_out

if TYPE_CHECKING:
    from plugyard.store.store import Store

_PIPELINE = "name, document, dialect, description, content_hash, created_at, updated_at, saved_by"
_RUN = "id, pipeline, status, request_id, subject, error, trace, started_at, duration_ms, stored"


class SqlPipelineStore:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = store.clock

    def put(self, pipeline: StoredPipeline) -> StoredPipeline:
        now = time_in(self._clock(), self._db.postgres)
        values = {
            "name": pipeline.name,
            "document": json_in(dict(pipeline.document)),
            "dialect": pipeline.dialect,
            "description": pipeline.description,
            "content_hash": document_hash(pipeline.document),
            "now": now,
            "saved_by": pipeline.saved_by,
        }
        with self._db.write() as tx:
            # A new name is created now; a known one keeps its creation time.
            tx.execute(
                f"INSERT INTO pipelines ({_PIPELINE}) VALUES (:name, :document, :dialect, "
                ":description, :content_hash, :now, :now, :saved_by) ON CONFLICT (name) DO "
                "UPDATE SET document = excluded.document, dialect = excluded.dialect, "
                "description = excluded.description, content_hash = excluded.content_hash, "
                "updated_at = excluded.updated_at, saved_by = excluded.saved_by",
                values,
            )
            found = tx.one(f"SELECT {_PIPELINE} FROM pipelines WHERE name = :name", values)
        assert found is not None  # written in this transaction
        return _pipeline(found)

    def get(self, name: str) -> StoredPipeline | None:
        with self._db.read() as tx:
            found = tx.one(f"SELECT {_PIPELINE} FROM pipelines WHERE name = :name", {"name": name})
        return _pipeline(found) if found is not None else None

    def list(self) -> tuple[StoredPipeline, ...]:
        with self._db.read() as tx:
            rows = tx.all(f"SELECT {_PIPELINE} FROM pipelines ORDER BY name")
        return tuple(_pipeline(r) for r in rows)

    def delete(self, name: str) -> bool:
        with self._db.write() as tx:
            gone = tx.execute("DELETE FROM pipelines WHERE name = :name", {"name": name})
        return gone == 1

    def save_run(self, run: PipelineRun) -> None:
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO pipeline_runs ({_RUN}) VALUES (:id, :pipeline, :status, "
                ":request_id, :subject, :error, :trace, :started_at, :duration_ms, :stored) "
                "ON CONFLICT (id) DO NOTHING",
                {
                    "id": run.run_id,
                    "pipeline": run.pipeline,
                    "status": run.status,
                    "request_id": run.request_id,
                    "subject": run.subject,
                    "error": json_in(run.error),
                    "trace": json_in([entry.to_dict() for entry in run.trace]),
                    "started_at": time_in(run.started_at, self._db.postgres),
                    "duration_ms": run.duration_ms,
                    "stored": json_in(run.stored),
                },
            )

    def get_run(self, run_id: str) -> PipelineRun | None:
        with self._db.read() as tx:
            found = tx.one(f"SELECT {_RUN} FROM pipeline_runs WHERE id = :id", {"id": run_id})
        return _run(found) if found is not None else None

    def runs(
        self, pipeline: str | None = None, limit: int = 50, *, subject: str | None = None
    ) -> tuple[PipelineRun, ...]:
        condition, values = matching(pipeline=pipeline, subject=subject)
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_RUN} FROM pipeline_runs{condition} "
                "ORDER BY started_at DESC, id DESC LIMIT :n",
                {**values, "n": max(limit, 0)},
            )
        return tuple(_run(r) for r in rows)


def _pipeline(found: tuple[Any, ...]) -> StoredPipeline:
    name, document, dialect, description, content_hash, created, updated, saved_by = found
    return StoredPipeline(
        name=name,
        document=json_document(document),
        dialect=dialect,
        description=description,
        content_hash=content_hash,
        created_at=time_out(created),
        updated_at=time_out(updated),
        saved_by=saved_by,
    )


def _run(found: tuple[Any, ...]) -> PipelineRun:
    key, pipeline, status, request_id, subject, error, trace, started, duration, stored = found
    started_at = time_out(started)
    return PipelineRun(
        run_id=key,
        pipeline=pipeline,
        status=status,
        context={},
        trace=tuple(TraceEntry.from_dict(entry) for entry in json_document(trace)),
        request_id=request_id,
        subject=subject,
        error=json_document(error),
        started_at=started_at,
        duration_ms=duration,
        stored=json_document(stored),
    )
