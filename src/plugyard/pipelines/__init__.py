"""OLO capability pipelines: documents, validation, the asyncio engine, traces, the
palette and Mermaid diagrams (docs/pipelines.md).

The usual way in is :class:`PipelineService` (``Yard.pipelines``): it stores, validates
and runs pipelines and reads their traces. The pieces are public too: :func:`load`
(text → document), :func:`validate` (document + registry → plan or faults),
:class:`Engine` (plan → run), :func:`mermaid` and :func:`palette_view`.
"""

from __future__ import annotations

from plugyard.pipelines.engine import Caller, Engine
from plugyard.pipelines.loading import Loaded, load
from plugyard.pipelines.mermaid import mermaid
from plugyard.pipelines.model import DocumentModel, PipelineModel
from plugyard.pipelines.palette import capabilities_of, palette_view
from plugyard.pipelines.placement import Catalog
from plugyard.pipelines.plan import Plan
from plugyard.pipelines.service import PipelineService
from plugyard.pipelines.store import PipelineStore, StoredPipeline
from plugyard.pipelines.store_sql import SqlPipelineStore
from plugyard.pipelines.trace import PipelineRun, TraceEntry
from plugyard.pipelines.validate import Validation, validate

__all__ = [
    "Caller",
    "Catalog",
    "DocumentModel",
    "Engine",
    "Loaded",
    "PipelineModel",
    "PipelineRun",
    "PipelineService",
    "PipelineStore",
    "Plan",
    "SqlPipelineStore",
    "StoredPipeline",
    "TraceEntry",
    "Validation",
    "capabilities_of",
    "load",
    "mermaid",
    "palette_view",
    "validate",
]
