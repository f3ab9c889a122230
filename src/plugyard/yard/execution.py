"""Execution for a yard: the executor, the one call path, and the backend that fan-out
and heavy operations run on.

The executor is built over the policy and governance in force, so a call is checked,
audited and limited the same way whichever surface made it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING

from plugyard.deferred import Runtimes, built, part
from plugyard.errors import PlugyardError
from plugyard.registry.registry import Registry
from plugyard.store.store import Store
from plugyard.yard.governing import Governing
from plugyard.yard.settings import Settings
from plugyard.yard.steps import Placement, call_path, with_step

if TYPE_CHECKING:
    from plugyard.execution.backend import Caller, ExecutionBackend
    from plugyard.execution.executor import Executor
    from plugyard.execution.steps import Step, UserStep


class Execution:
    """The executor over the yard's runtimes, and where fan-out goes."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        registry: Registry,
        runtimes: Runtimes,
        governing: Governing,
    ) -> None:
        self.settings = settings
        self.store = store
        self.registry = registry
        self.runtimes = runtimes
        self.governing = governing
        #: the application's own steps, in the order they were added
        self.added: list[Placement] = []

    def steps(self) -> list[Step]:
        """The call path of this yard, outermost first (``plugyard.yard.steps``)."""
        governing = self.governing
        return call_path(self.registry, policy=governing.policy, governance=governing.governance,
                         added=self.added)  # fmt: skip

    def add_step(
        self, step: UserStep, *, before: str | None = None, after: str | None = None
    ) -> None:
        """Put an application's step on the call path, just before (outside) or just after
        (inside) a step named in ``plugyard.yard.steps.GOVERNED``; with neither, just
        before the parameters are validated (docs/calling.md#steps)."""
        placement = Placement(step, before, after)
        with_step(self.steps(), placement)  # a misplaced step is refused here, not later
        self.added.append(placement)
        executor = built(self, "executor")
        if executor is not None:
            executor.steps = self.steps()

    @part
    def executor(self) -> Executor:
        """The one call path."""
        from plugyard.execution.executor import Executor, Limits

        limits = Limits(self.settings.default_timeout_ms)
        executor = Executor(self.registry, self.runtimes.lazy, limits=limits, steps=self.steps())
        if self.backend is not None:
            executor.offload = self.backend  # heavy operations run there
        return executor

    @part
    def backend(self) -> ExecutionBackend | None:
        """The execution backend fan-out runs on (docs/scaling.md#ray); ``None`` for
        ``local``: the executor itself, on this event loop."""
        from plugyard.execution.backend import BackendSpec

        spec = BackendSpec.parse(self.settings.execution)
        if not spec.remote:
            return None
        from plugyard.execution.ray_backend import RayBackend, WorkerSpec
        from plugyard.yard.worker import worker_executor

        url = self.store.engine.url
        if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
            raise PlugyardError("a Ray worker cannot open an in-memory database: "
                                "give the yard a SQLite file or a PostgreSQL URL",
                                code="execution_backend_unavailable")  # fmt: skip
        # The worker builds its yard on the same database (the URL with its password: the
        # worker must log in too) and runs everything itself. It reads the registry and
        # the policy this yard keeps there, never its sources or policy file again.
        database = url.render_as_string(hide_password=False)
        worker_settings = replace(self.settings, database=database, execution="local",
                                  policy_file=None)  # fmt: skip
        # One yard per worker process for equal settings, however many callers share them.
        key = hashlib.sha256(repr(worker_settings).encode()).hexdigest()
        governance = self.governing.governance
        from plugyard.governance.audit.step import backend_audit

        return RayBackend(
            spec.address,
            WorkerSpec(key, functools.partial(worker_executor, worker_settings)),
            connect_timeout_s=self.settings.execution_connect_timeout_s,
            default_timeout_ms=self.settings.default_timeout_ms,
            audit=backend_audit(governance.audit) if governance is not None else None,
        )

    def fanout(self) -> Caller:
        """What fan-out calls go to: the backend, else the executor."""
        return self.backend if self.backend is not None else self.executor
