"""Where pipeline documents and run traces are kept: a small Protocol, in memory here and
on the store's database in :mod:`plugyard.pipelines.store_sql`.

A stored document is kept as written (its dialect's own data), so faults found when it
is validated again still point into it. A stored run is its trace without the context.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from plugyard.pipelines.trace import PipelineRun

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def document_hash(document: Mapping[str, Any]) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredPipeline:
    """A pipeline document under a name. Timestamps are set by the store."""

    name: str
    document: Mapping[str, Any]
    dialect: str = "plugyard"
    description: str = ""
    content_hash: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: The subject that stored this version (``None``: the embedding application).
    saved_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "dialect": self.dialect,
            "content_hash": self.content_hash,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "saved_by": self.saved_by,
            "document": dict(self.document),
        }


class PipelineStore(Protocol):
    """Pipeline documents by name, and run traces by run id."""

    def put(self, pipeline: StoredPipeline) -> StoredPipeline:
        """Insert or replace; answers the row as stored (hash and timestamps set)."""
        ...

    def get(self, name: str) -> StoredPipeline | None: ...

    def list(self) -> tuple[StoredPipeline, ...]:
        """Every stored pipeline, by name."""
        ...

    def delete(self, name: str) -> bool: ...

    def save_run(self, run: PipelineRun) -> None:
        """Keep a run's trace (its context is dropped)."""
        ...

    def get_run(self, run_id: str) -> PipelineRun | None: ...

    def runs(
        self, pipeline: str | None = None, limit: int = 50, *, subject: str | None = None
    ) -> tuple[PipelineRun, ...]:
        """The newest runs first, of one pipeline or of all; of one ``subject`` or of
        every subject (``None``)."""
        ...


class MemoryPipelineStore:
    """In process, for tests and embedding; keeps the newest ``max_runs`` runs."""

    def __init__(self, *, max_runs: int = 1000, clock: Clock = utc_now) -> None:
        self._pipelines: dict[str, StoredPipeline] = {}
        self._runs: OrderedDict[str, PipelineRun] = OrderedDict()
        self._max_runs = max_runs
        self._clock = clock
        self._lock = threading.Lock()

    def put(self, pipeline: StoredPipeline) -> StoredPipeline:
        with self._lock:
            now = self._clock()
            previous = self._pipelines.get(pipeline.name)
            created = previous.created_at if previous else now
            stored = replace(
                pipeline,
                document=json.loads(json.dumps(pipeline.document)),
                content_hash=document_hash(pipeline.document),
                created_at=created,
                updated_at=now,
            )
            self._pipelines[pipeline.name] = stored
            return stored

    def get(self, name: str) -> StoredPipeline | None:
        return self._pipelines.get(name)

    def list(self) -> tuple[StoredPipeline, ...]:
        return tuple(self._pipelines[name] for name in sorted(self._pipelines))

    def delete(self, name: str) -> bool:
        with self._lock:
            return self._pipelines.pop(name, None) is not None

    def save_run(self, run: PipelineRun) -> None:
        with self._lock:
            self._runs[run.run_id] = replace(run, context={})
            while len(self._runs) > self._max_runs:
                self._runs.popitem(last=False)

    def get_run(self, run_id: str) -> PipelineRun | None:
        return self._runs.get(run_id)

    def runs(
        self, pipeline: str | None = None, limit: int = 50, *, subject: str | None = None
    ) -> tuple[PipelineRun, ...]:
        with self._lock:
            newest = list(reversed(self._runs.values()))
        chosen = [
            r
            for r in newest
            if (pipeline is None or r.pipeline == pipeline)
            and (subject is None or r.subject == subject)
        ]
        return tuple(chosen[: max(limit, 0)])
