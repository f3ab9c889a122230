"""Where pipeline documents and run traces are kept: a small Protocol, met on the store's
database (a file, PostgreSQL, or SQLite in memory) by :mod:`plugyard.pipelines.store_sql`.

A stored document is kept as written (its dialect's own data), so faults found when it
is validated again still point into it. A stored run is its trace without the context.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from plugyard.pipelines.trace import PipelineRun


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
