"""Installing and removing packages while the host runs: the folder and the registry move
together. A package may not take a plugin id another source holds (``duplicate_plugin``,
checked before anything is put in place); an upgrade drops the ids its new version no
longer declares. Removing or upgrading a package releases its plugins from the runtimes
at once — their workers are stopped, their cached code and describe forgotten — so no
worker lives on with the old files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from plugyard.errors import PackageError, RegistryError
from plugyard.registry.model import RegisteredPlugin, RegistryEvent, Trust
from plugyard.registry.packages.installer import InstalledPackage, Installer
from plugyard.registry.packages.source import load_package
from plugyard.registry.registry import Registry

#: How the host checks a plugin before registering it (``yard.check`` with its runtimes).
Check = Callable[[RegisteredPlugin], RegisteredPlugin]
#: How the host lets go of a plugin id's workers and cached code (every runtime's ``forget``).
Release = Callable[[str], None]


def _keep(plugin_id: str) -> None:
    """Nothing to release: a manager without runtimes."""


@dataclass(frozen=True, slots=True)
class Installed:
    package: InstalledPackage
    events: tuple[RegistryEvent, ...]
    unavailable: tuple[tuple[str, str], ...]  # (plugin id, reason) the runtimes gave


class PackageManager:
    def __init__(
        self, installer: Installer, registry: Registry, check: Check, release: Release = _keep
    ) -> None:
        self.installer = installer
        self.registry = registry
        self.check = check
        self.release = release

    @property
    def root(self) -> Path:
        return self.installer.root

    def install(
        self,
        archive: bytes | Path,
        *,
        trust: Trust = "untrusted",
        allow_findings: bool = False,
        name: str | None = None,
    ) -> Installed:
        """Install (or upgrade) a package and register its plugins."""
        before = {p.name for p in self.installer.installed()}
        package = self.installer.install(
            archive, trust=trust, allow_findings=allow_findings, name=name, vet=self._vet
        )
        # The old files are gone: what ran them stops, and the new version is checked
        # afresh, not from what was cached for the old one.
        for held in self._held_by(package.name):
            self.release(held.id)
        try:
            result = load_package(package)
            if result.failures:
                first = result.failures[0]
                raise PackageError(f"{first.source}: {first.message}", reason="manifest_invalid")
            plugins = [self.check(p) for p in result.plugins]
            events = list(self.registry.register_many(plugins, replace=True))
        except Exception:
            # Refused after its files were put in place: a new package leaves nothing
            # behind. (An upgrade keeps the new files; its old plugins stay registered.)
            if package.name not in before:
                self.installer.remove(package.name)
            raise
        wanted = {p.id for p in plugins}
        for stale in self._held_by(package.name):
            if stale.id not in wanted:
                event = self.registry.unregister(stale.id)
                if event is not None:
                    events.append(event)
        unavailable = tuple((p.id, p.unavailable_reason or "") for p in plugins if not p.available)
        return Installed(package, tuple(events), unavailable)

    def installed(self) -> list[InstalledPackage]:
        return self.installer.installed()

    def remove(self, name: str) -> tuple[InstalledPackage, tuple[RegistryEvent, ...]]:
        """Remove a package and unregister its plugins (``package_not_found``)."""
        held = self._held_by(name)
        package = self.installer.remove(name)
        events = [e for e in (self.registry.unregister(p.id) for p in held) if e is not None]
        for plugin in held:
            self.release(plugin.id)
        return package, tuple(events)

    def _vet(self, name: str, plugin_ids: Sequence[str]) -> None:
        for plugin_id in plugin_ids:
            held = self.registry.find(plugin_id)
            if held is not None and not self._owned(held, name):
                raise RegistryError(
                    f"plugin id {plugin_id!r} belongs to {held.source} plugin "
                    f"{held.location or held.source}",
                    code="duplicate_plugin",
                )

    def _held_by(self, name: str) -> list[RegisteredPlugin]:
        return [p for p in self.registry.list() if self._owned(p, name)]

    def _owned(self, plugin: RegisteredPlugin, name: str) -> bool:
        if plugin.location is None:
            return False
        folder = (self.root / name).resolve()
        return Path(plugin.location).resolve().is_relative_to(folder)
