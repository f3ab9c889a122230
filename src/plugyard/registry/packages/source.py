"""Installed packages as a plugin source, and where each package's code may run.

Every start re-reads the packages root, so installed packages survive a restart with the
trust the operator gave them (``install.json``), never what the zip says. A ``python``
plugin of a package runs in plugyard's Python worker (``-m plugyard.runtimes.subprocess.
pyworker <folder> <plugin id>``) rather than in-process when

- the package is untrusted: the subprocess runtime runs untrusted workers sandboxed, and
  refuses them where no sandbox exists; or
- the package runs from a virtual environment of its own (``requirements.txt``, when an
  operator allows them: venvs.py); or
- the package has a ``vendor/`` folder, even trusted: in one process ``sys.modules`` is one
  namespace keyed by module name, so a vendored ``requests`` and the host's cannot both
  be loaded, and an import of a name already in ``sys.modules`` never reaches a per-plugin
  finder — "vendor first, for this plugin only" is only true in a process of its own.

A trusted package without ``vendor/`` runs in-process like any trusted plugin folder.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from plugyard.errors import PlugyardError
from plugyard.manifest.model import PythonRuntime, SubprocessRuntime
from plugyard.registry.model import LoadFailure, RegisteredPlugin
from plugyard.registry.packages.installer import InstalledPackage, Installer
from plugyard.registry.packages.venvs import site_packages
from plugyard.registry.sources import SourceResult, load_manifest, manifest_of, merge

PYWORKER = "plugyard.runtimes.subprocess.pyworker"


@dataclass(frozen=True)
class PackageSource:
    """The plugins of every package installed under ``root``."""

    root: Path

    @property
    def name(self) -> str:
        return f"packages:{self.root}"

    def load(self) -> SourceResult:
        return merge(load_package(p) for p in Installer(self.root).installed())


def load_package(package: InstalledPackage) -> SourceResult:
    """The plugins one installed package declares, each placed on the runtime it may use."""
    manifest = manifest_of(package.files)
    if manifest is None:
        return SourceResult(
            failures=(LoadFailure(str(package.folder), "package_invalid", "the manifest is gone"),)
        )
    result = load_manifest(manifest, source="folder", trust=package.trust)
    try:
        placed = tuple(place(p, package) for p in result.plugins)
    except PlugyardError as exc:
        return SourceResult(failures=(LoadFailure(str(package.folder), exc.code, exc.message),))
    return replace(result, plugins=placed)


def place(plugin: RegisteredPlugin, package: InstalledPackage) -> RegisteredPlugin:
    """``plugin`` moved to the Python worker when it may not run in-process."""
    runtime = plugin.descriptor.runtime
    if not isinstance(runtime, PythonRuntime):
        return plugin
    if plugin.trust == "trusted" and not package.vendor and not package.venv:
        return plugin
    site = str(site_packages(package.files)) if package.venv else None
    worker = pyworker_runtime(str(package.files), plugin.id, site)
    config = dict(plugin.descriptor.config)
    config.setdefault("mode", "persistent")  # one warm worker, not a spawn per call
    descriptor = plugin.descriptor.model_copy(update={"runtime": worker, "config": config})
    return plugin.redescribed(descriptor)


def pyworker_runtime(folder: str, plugin_id: str, site: str | None = None) -> SubprocessRuntime:
    """The runtime that starts plugyard's Python worker on one plugin of a folder (a Shu
    manifest may declare several), importing first from ``site`` (its venv) if given."""
    args = ("-I", "-S", "-m", PYWORKER, folder, plugin_id, *((site,) if site else ()))
    return SubprocessRuntime(command=sys.executable, args=args)
