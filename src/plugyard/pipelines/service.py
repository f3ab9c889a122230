"""Everything the surfaces do with pipelines, behind one object.

A REST layer maps each route to one method and each :class:`PipelineError` code to its
HTTP status (errors.py): store (``save``), validate, run a stored pipeline or a
document given inline, read a run's trace. The service validates against the registry
every time a pipeline runs, so a stored pipeline never runs against plugins that changed
under it unchecked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from plugyard.errors import PipelineError, PlugyardError
from plugyard.execution.executor import new_request_id
from plugyard.pipelines.engine import Caller, Engine
from plugyard.pipelines.loading import Loaded, load
from plugyard.pipelines.mermaid import mermaid
from plugyard.pipelines.palette import palette_view
from plugyard.pipelines.placement import Catalog
from plugyard.pipelines.store import MemoryPipelineStore, PipelineStore, StoredPipeline
from plugyard.pipelines.trace import PipelineRun
from plugyard.pipelines.validate import Validation, validate
from plugyard.runtimes.base import CallContext
from plugyard.store.keys import ADMIN_ROLE

LOG = logging.getLogger("plugyard.pipelines")
Source = str | bytes | Mapping[str, Any]


class PipelineService:
    """Store, validate and run pipelines; read their traces and the palette."""

    def __init__(
        self,
        catalog: Catalog,
        caller: Caller,
        store: PipelineStore | None = None,
        *,
        fanout: Caller | None = None,
    ) -> None:
        self.catalog = catalog
        self.store: PipelineStore = store or MemoryPipelineStore()
        self.engine = Engine(caller, sink=self._record, fanout=fanout)

    # ------------------------------------------------------------------ documents

    def validate(self, source: Source | Loaded) -> Validation:
        """Every fault and warning of a document; never raises for a bad document."""
        return validate(source, self.catalog)

    def checked(self, source: Source | Loaded) -> Validation:
        """The validation of a document that must be valid (``pipeline_invalid``)."""
        validation = self.validate(source)
        if not validation.ok:
            first = validation.faults[0]
            more = f" (+{len(validation.faults) - 1} more)" if len(validation.faults) > 1 else ""
            raise PipelineError(
                f"{first.code} at '{first.pointer}': {first.message}{more}",
                problems=validation.faults,
            )
        return validation

    def save(self, source: Source, *, name: str | None = None) -> StoredPipeline:
        """Validate and store a document under ``name`` (default: the one it gives)."""
        loaded = load(source)
        validation = self.checked(loaded)
        assert validation.document is not None and validation.plan is not None
        chosen = name or validation.document.name or validation.plan.entry
        if chosen is None:
            raise PipelineError("the document names no pipeline: give a name to store it")
        stored = StoredPipeline(
            chosen,
            dict(loaded.source or {}),
            loaded.dialect,
            validation.document.description,
        )
        return self.store.put(stored)

    def get(self, name: str) -> StoredPipeline:
        found = self.store.get(name)
        if found is None:
            raise PipelineError(f"no stored pipeline {name!r}", code="pipeline_not_found")
        return found

    def list(self) -> tuple[StoredPipeline, ...]:
        return self.store.list()

    def delete(self, name: str) -> None:
        if not self.store.delete(name):
            raise PipelineError(f"no stored pipeline {name!r}", code="pipeline_not_found")

    # ------------------------------------------------------------------ runs

    async def run(
        self,
        source: Source,
        input: Mapping[str, Any] | None = None,
        *,
        pipeline: str | None = None,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        request_id: str | None = None,
        timeout_ms: int | None = None,
        budgets: Mapping[str, Any] | None = None,
    ) -> PipelineRun:
        """Validate ``source`` and run it on ``input``. A pipeline that fails while it runs
        answers a run with ``status: error`` (its trace kept); only a document that does
        not validate, or names no runnable pipeline, raises.

        Who runs it is as the caller says (a server says it from the API key): with no
        ``subject`` and no ``roles`` it is the embedding application itself, with the
        ``admin`` role, as for ``Yard.call``."""
        if input is not None and not isinstance(input, Mapping):
            raise PipelineError("the input must be a JSON object", code="invalid_request")
        # Validating a large document is CPU work: off the loop, as the run is not.
        plan = (await asyncio.to_thread(self.checked, source)).plan
        assert plan is not None
        context = CallContext(
            request_id=request_id or new_request_id(),
            subject=subject,
            roles=tuple(roles) if roles is not None else _application(subject),
            budgets=dict(budgets or {}),
        )
        return await self.engine.run(
            plan, input or {}, pipeline=pipeline, context=context, timeout_ms=timeout_ms
        )

    async def run_stored(
        self, name: str, input: Mapping[str, Any] | None = None, **options: Any
    ) -> PipelineRun:
        """Run a stored document (its entry pipeline unless ``pipeline=`` says)."""
        return await self.run(self.get(name).document, input, **options)

    def trace(self, run_id: str) -> PipelineRun:
        """A recorded run: status, error and trace (the context is not kept)."""
        found = self.store.get_run(run_id)
        if found is None:
            raise PipelineError(f"no run {run_id!r}", code="pipeline_run_not_found")
        return found

    def runs(self, pipeline: str | None = None, limit: int = 50) -> tuple[PipelineRun, ...]:
        return self.store.runs(pipeline, limit)

    def _record(self, run: PipelineRun) -> None:
        try:
            self.store.save_run(run)
        except PlugyardError as exc:  # a run must not fail because its trace was not kept
            LOG.warning("run %s: trace not stored: %s", run.run_id, exc)

    # ------------------------------------------------------------------ views

    def palette(self, capabilities: Sequence[str] | None = None) -> dict[str, Any]:
        return palette_view(self.catalog.list(), capabilities)

    def diagram(self, source: Source, pipeline: str | None = None) -> str:
        loaded = load(source)
        if loaded.document is None:
            raise PipelineError("the document has faults", problems=loaded.faults)
        return mermaid(loaded.document, pipeline)


def _application(subject: str | None) -> tuple[str, ...]:
    return (ADMIN_ROLE,) if subject is None else ()
