"""What a yard registers when it starts: its sources, each plugin checked by its runtime.

The check is shared by every way a plugin enters the registry — a source at start, a
registration, a package install — so a plugin is registered as its runtime sees it
whichever way it came.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace

from plugyard import __version__
from plugyard.builtins import BUILTINS_DIR
from plugyard.registry.memory import FolderMemory
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.packages.source import PackageSource
from plugyard.registry.sources import FolderSource, PluginSource, SourceResult
from plugyard.runtimes.base import Runtime, Target
from plugyard.yard.settings import Settings, packages_root


@dataclass(frozen=True)
class Checked:
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
    return plugin.redescribed(refined)


def plugin_sources(settings: Settings, memory: FolderMemory | None = None) -> list[PluginSource]:
    """Where the settings say plugins come from, in the order they are synced."""
    sources: list[PluginSource] = []
    if settings.builtins:
        sources.append(FolderSource(BUILTINS_DIR, trust="trusted", kind="builtin", memory=memory))
    sources.extend(
        FolderSource(path, trust="trusted", memory=memory) for path in settings.plugin_dirs
    )
    if settings.catalog is not None:
        from plugyard.registry.catalog import CatalogSource

        sources.append(CatalogSource(settings.catalog, memory=memory))
    if settings.entrypoints:
        from plugyard.registry.entrypoints import EntryPointSource

        sources.append(EntryPointSource.of(settings.entrypoints))
    packages = packages_root(settings)
    if packages is not None:
        sources.append(PackageSource(packages))
    return sources


def check_context(settings: Settings) -> str:
    """What a runtime's verdict on an unchanged plugin folder also depends on: a change
    here has every folder read and checked again (registry.memory)."""
    return "|".join((__version__, sys.version, sys.executable, *sorted(settings.subprocess_allow)))
