"""The composition root: ``Yard.from_settings()`` builds everything, and nothing else does.

A yard opens the store (SQLite by default, PostgreSQL when ``PLUGYARD_DATABASE_URL``
says so), syncs the registry from its sources (the bundled plugins, plugin folders, a
catalog file, allowlisted entry points, and externals already in the store), lets each
runtime check and refine what it will run, and wires the executor — the one call path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from plugyard.builtins import BUILTINS_DIR
from plugyard.execution.executor import CallRequest, Executor, Limits, new_request_id
from plugyard.execution.result import Result
from plugyard.registry.catalog import CatalogSource
from plugyard.registry.entrypoints import EntryPointSource
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.registry.sources import FolderSource, PluginSource, SourceResult
from plugyard.registry.sync import SyncReport, sync_on_start
from plugyard.runtimes.base import CallContext, Runtime, Target
from plugyard.runtimes.python.runtime import InProcessRuntime
from plugyard.store.store import Store


@dataclass(frozen=True)
class Settings:
    """Everything a yard is built from; :meth:`from_env` reads ``PLUGYARD_*``."""

    # A URL or a SQLite path; None → PLUGYARD_DATABASE_URL, else ./.plugyard/plugyard.db.
    database: str | None = None
    builtins: bool = True
    plugin_dirs: tuple[Path, ...] = ()
    catalog: Path | None = None
    entrypoints: tuple[str, ...] = ()  # allowlisted distributions or "dist:entry" names
    default_timeout_ms: int = 30_000

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        dirs = tuple(Path(p) for p in env.get("PLUGYARD_PLUGIN_DIRS", "").split(os.pathsep) if p)
        allow = tuple(a for a in env.get("PLUGYARD_ENTRYPOINTS", "").split(",") if a)
        catalog = env.get("PLUGYARD_CATALOG")
        base = cls(
            database=env.get("PLUGYARD_DATABASE_URL"),
            builtins=env.get("PLUGYARD_BUILTINS", "1") not in {"0", "false", "no"},
            plugin_dirs=dirs,
            catalog=Path(catalog) if catalog else None,
            entrypoints=allow,
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True)
class _Checked:
    """A source whose plugins the runtimes have checked (and refined from code) before
    they are registered, so a restart registers exactly what it registered before."""

    inner: PluginSource
    runtimes: Mapping[str, Runtime]

    @property
    def name(self) -> str:
        return self.inner.name

    def load(self) -> SourceResult:
        result = self.inner.load()
        checked = tuple(check(plugin, self.runtimes) for plugin in result.plugins)
        return replace(result, plugins=checked)


def check(plugin: RegisteredPlugin, runtimes: Mapping[str, Runtime]) -> RegisteredPlugin:
    """``plugin`` as its runtime sees it: refined from code, or unavailable with a reason."""
    runtime_spec = plugin.descriptor.runtime
    if runtime_spec.kind == "none":
        reason = runtime_spec.reason or "descriptor only: nothing to run"
        return replace(plugin, available=False, unavailable_reason=reason)
    runtime = runtimes.get(runtime_spec.kind)
    if runtime is None:
        return replace(
            plugin, available=False, unavailable_reason=f"no {runtime_spec.kind!r} runtime here"
        )
    target = Target(plugin.descriptor, plugin.location, plugin.trust, plugin.content_hash)
    problem = runtime.check(target)
    if problem is not None:
        return replace(plugin, available=False, unavailable_reason=problem)
    describe = getattr(runtime, "describe", None)
    refined = describe(target) if describe is not None else None
    if refined is None or refined == plugin.descriptor:
        return plugin
    return RegisteredPlugin.of(
        refined,
        plugin.source,
        trust=plugin.trust,
        location=plugin.location,
        manifest_path=plugin.manifest_path,
        dialect=plugin.dialect,
    )


@dataclass
class Yard:
    """A running plugyard: store, registry, runtimes and executor, built once."""

    settings: Settings
    store: Store
    registry: Registry
    runtimes: dict[str, Runtime]
    executor: Executor
    report: SyncReport
    sources: Sequence[PluginSource] = field(default_factory=tuple)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Yard:
        settings = settings or Settings.from_env()
        store = Store.open(settings.database)
        registry = Registry.over(store)
        runtimes: dict[str, Runtime] = {"python": InProcessRuntime()}
        sources = [_Checked(s, runtimes) for s in _sources(settings)]
        report = sync_on_start(registry, sources)
        executor = Executor(
            registry, runtimes, limits=Limits(default_timeout_ms=settings.default_timeout_ms)
        )
        return cls(settings, store, registry, runtimes, executor, report, tuple(sources))

    async def call(
        self,
        plugin_id: str,
        operation: str | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        subject: str | None = None,
        timeout_ms: int | None = None,
        debug: bool = False,
    ) -> Result:
        """Call one operation through the executor."""
        context = CallContext(request_id=new_request_id(), subject=subject, debug=debug)
        request = CallRequest(plugin_id, operation, dict(params or {}), context, timeout_ms)
        return await self.executor.call(request)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Yard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sources(settings: Settings) -> list[PluginSource]:
    sources: list[PluginSource] = []
    if settings.builtins:
        sources.append(FolderSource(BUILTINS_DIR, trust="trusted", kind="builtin"))
    sources.extend(FolderSource(path, trust="trusted") for path in settings.plugin_dirs)
    if settings.catalog is not None:
        sources.append(CatalogSource(settings.catalog))
    if settings.entrypoints:
        sources.append(EntryPointSource.of(settings.entrypoints))
    return sources
