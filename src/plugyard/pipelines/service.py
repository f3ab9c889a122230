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
from typing import Any, Protocol

from plugyard.errors import PipelineError, PlugyardError
from plugyard.execution.executor import new_request_id
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right
from plugyard.pipelines.engine import Caller as Calls
from plugyard.pipelines.engine import Engine
from plugyard.pipelines.loading import Loaded, Mode, load
from plugyard.pipelines.mermaid import mermaid
from plugyard.pipelines.palette import palette_view
from plugyard.pipelines.placement import Catalog
from plugyard.pipelines.store import PipelineStore, StoredPipeline
from plugyard.pipelines.trace import PipelineRun
from plugyard.pipelines.validate import Validation, validate
from plugyard.runtimes.base import CallContext
from plugyard.types import Caller

LOG = logging.getLogger("plugyard.pipelines")
Source = str | bytes | Mapping[str, Any]


class AuditLog(Protocol):
    """Where saves and deletes are recorded: the governance's hash-chained audit log."""

    def append(self, kind: str, *, status: str, **values: Any) -> object: ...


class PipelineService:
    """Store, validate and run pipelines; read their traces and the palette."""

    def __init__(
        self,
        catalog: Catalog,
        caller: Calls,
        store: PipelineStore,
        *,
        fanout: Calls | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.engine = Engine(caller, sink=self._record, fanout=fanout)
        self.audit = audit

    # ------------------------------------------------------------------ documents

    def validate(self, source: Source | Loaded, mode: Mode = "strict") -> Validation:
        """Every fault and warning of a document; never raises for a bad document.
        ``mode="auto"`` checks an OLO engine config as OLO's engine does."""
        return validate(source, self.catalog, mode)

    def checked(self, source: Source | Loaded, mode: Mode = "strict") -> Validation:
        """The validation of a document that must be valid (``pipeline_invalid``)."""
        validation = self.validate(source, mode)
        if not validation.ok:
            first = validation.faults[0]
            more = f" (+{len(validation.faults) - 1} more)" if len(validation.faults) > 1 else ""
            raise PipelineError(
                f"{first.code} at '{first.pointer}': {first.message}{more}",
                problems=validation.faults,
            )
        return validation

    def save(
        self,
        source: Source,
        *,
        name: str | None = None,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
    ) -> StoredPipeline:
        """Validate and store a document under ``name`` (default: the one it gives), for
        a holder of ``pipeline.save`` (whoever runs it later runs this document with
        their own rights). Who saves is as for :meth:`run`; the save is audited."""
        who = Caller.of(subject, roles)
        rights.require(who, Right.PIPELINE_SAVE)
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
            saved_by=who.subject,
        )
        kept = self.store.put(stored)
        self._audit("saved", who, kept)
        return kept

    def get(self, name: str) -> StoredPipeline:
        found = self.store.get(name)
        if found is None:
            raise PipelineError(f"no stored pipeline {name!r}", code="pipeline_not_found")
        return found

    def list(self) -> tuple[StoredPipeline, ...]:
        return self.store.list()

    def delete(
        self, name: str, *, subject: str | None = None, roles: Sequence[str] | None = None
    ) -> None:
        """Delete a stored pipeline, for a holder of ``pipeline.delete``; audited."""
        who = Caller.of(subject, roles)
        rights.require(who, Right.PIPELINE_DELETE)
        found = self.store.get(name)
        if found is None or not self.store.delete(name):
            raise PipelineError(f"no stored pipeline {name!r}", code="pipeline_not_found")
        self._audit("deleted", who, found)

    def _audit(self, status: str, who: Caller, pipeline: StoredPipeline) -> None:
        if self.audit is None:
            return
        detail = {"name": pipeline.name, "content_hash": pipeline.content_hash,
                  "dialect": pipeline.dialect}  # fmt: skip
        self.audit.append("pipeline", status=status, subject=who.subject,
                          request_id=new_request_id(), detail=detail)  # fmt: skip

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
        mode: Mode = "strict",
        stored: StoredPipeline | None = None,
    ) -> PipelineRun:
        """Validate ``source`` and run it on ``input``. A pipeline that fails while it runs
        answers a run with ``status: error`` (its trace kept); only a document that does
        not validate, or names no runnable pipeline, raises.

        Who runs it is as the caller says (a server says it from the API key): with no
        ``subject`` and no ``roles`` it is the embedding application itself, with the
        ``admin`` role, as for ``Yard.call``. ``stored``: the stored pipeline ``source``
        is the document of (:meth:`run_stored`), which the run records."""
        if input is not None and not isinstance(input, Mapping):
            raise PipelineError("the input must be a JSON object", code="invalid_request")
        # Validating a large document is CPU work: off the loop, as the run is not.
        plan = (await asyncio.to_thread(self.checked, source, mode)).plan
        assert plan is not None
        context = CallContext(
            request_id=request_id or new_request_id(),
            subject=subject,
            roles=Caller.of(subject, roles).roles,
            budgets=dict(budgets or {}),
        )
        origin = None
        if stored is not None:
            origin = {"name": stored.name, "saved_by": stored.saved_by,
                      "content_hash": stored.content_hash}  # fmt: skip
        return await self.engine.run(plan, input or {}, pipeline=pipeline, context=context,
                                     timeout_ms=timeout_ms, stored=origin)  # fmt: skip

    async def run_stored(
        self, name: str, input: Mapping[str, Any] | None = None, **options: Any
    ) -> PipelineRun:
        """Run a stored document (its entry pipeline unless ``pipeline=`` says); the run
        records whose document it was."""
        found = self.get(name)
        return await self.run(found.document, input, stored=found, **options)

    def trace(
        self, run_id: str, *, subject: str | None = None, roles: Sequence[str] | None = None
    ) -> PipelineRun:
        """A recorded run: status, error and trace (the context is not kept). A run is
        its subject's (and those who see every owner's records): anyone else's answers
        ``pipeline_run_not_found``, as an unknown id does."""
        found = self.store.get_run(run_id)
        if found is None or not rights.may_see(Caller.of(subject, roles), found.subject):
            raise PipelineError(f"no run {run_id!r}", code="pipeline_run_not_found")
        return found

    def runs(
        self,
        pipeline: str | None = None,
        limit: int = 50,
        *,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
    ) -> tuple[PipelineRun, ...]:
        """The newest runs the caller may see (as :meth:`trace`)."""
        owner = rights.owner_scope(Caller.of(subject, roles))
        return self.store.runs(pipeline, limit, subject=owner)

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
