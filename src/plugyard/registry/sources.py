"""Where plugins come from, and reading plugin folders.

A source is read only when its ``load()`` is called — never on import. It reports each
plugin it could not read as a :class:`LoadFailure` and goes on with the rest; trust is
the source's (the operator's) setting and never taken from a manifest.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from plugyard.errors import ManifestError, PlugyardError
from plugyard.manifest.load import load_file
from plugyard.registry.model import LoadFailure, RegisteredPlugin, SourceKind, Trust

#: The manifest a plugin folder is read from, first match wins; the rest of the folder
#: (code, vendored packages, sidecars) is never searched for more manifests.
FOLDER_MANIFESTS = (
    "plugin.yaml", "plugin.yml", "plugin.json",
    "manifest.yaml", "manifest.yml", "manifest.json", "manifest.py",
)  # fmt: skip
#: How deep below a root plugin folders are looked for (``plugins/<family>/<id>/``).
MAX_DEPTH = 4
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
_BY_NAME = operator.attrgetter("name")


@dataclass(frozen=True, slots=True)
class SourceResult:
    """What one source yielded. ``skipped`` names what was left out on purpose
    (disabled in a catalog, not on an allowlist): not failures, but worth showing.
    ``unchanged`` are plugins of folders unchanged since they were registered, as the
    registry holds them (already checked by their runtime): see :class:`FolderMemory`."""

    plugins: tuple[RegisteredPlugin, ...] = ()
    failures: tuple[LoadFailure, ...] = ()
    skipped: tuple[str, ...] = field(default_factory=tuple)
    unchanged: tuple[RegisteredPlugin, ...] = ()


class FolderMemory(Protocol):
    """What the last start read from each plugin folder (``registry.memory``)."""

    def read(
        self,
        manifest: str,
        entries: Sequence[os.DirEntry[str]],
        source: SourceKind,
        trust: Trust,
        load: Callable[[], SourceResult],
    ) -> SourceResult:
        """The folder's plugins as registered when it has not changed, else ``load()``."""
        ...


class PluginSource(Protocol):
    """A place plugins are read from when the host starts."""

    @property
    def name(self) -> str: ...

    def load(self) -> SourceResult: ...


@dataclass(frozen=True)
class StaticSource:
    """Plugins already in hand (tests, or plugins a host builds in code)."""

    plugins: tuple[RegisteredPlugin, ...]
    name: str = "static"

    def load(self) -> SourceResult:
        return SourceResult(plugins=self.plugins)


@dataclass(frozen=True)
class FolderSource:
    """Every plugin folder under ``root``: ``plugins/<family>/<id>/``, HomeClaw's
    ``plugins/<id>/``, or ``root`` itself when it holds a manifest. With a ``memory``,
    folders unchanged since the last start are not read again."""

    root: Path
    trust: Trust = "trusted"
    kind: SourceKind = "folder"
    memory: FolderMemory | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.root}"

    def load(self) -> SourceResult:
        return load_folder(Path(self.root), source=self.kind, trust=self.trust,
                           memory=self.memory)  # fmt: skip


def load_folder(
    root: Path, *, source: SourceKind, trust: Trust, memory: FolderMemory | None = None
) -> SourceResult:
    """Read a plugin folder, a folder of plugin folders, or one manifest file."""
    if root.is_file():
        return merge([load_manifest(root, source=source, trust=trust)])
    if not root.is_dir():
        return SourceResult(failures=(_missing(root),))

    def read(manifest: str, entries: Sequence[os.DirEntry[str]]) -> SourceResult:
        def load() -> SourceResult:
            return load_manifest(Path(manifest), source=source, trust=trust)

        return load() if memory is None else memory.read(manifest, entries, source, trust, load)

    # Resolved paths: a manifest's path is its plugins' ``manifest_path``, which the
    # memory compares with what the registry holds.
    folders = _plugin_folders(str(root.resolve()), resolve=True)
    return merge(read(manifest, entries) for manifest, entries in folders)


def plugin_manifests(root: Path) -> list[Path]:
    """The manifest of each plugin folder under ``root``, in a stable order."""
    return [Path(manifest) for manifest, _ in _plugin_folders(str(root), resolve=False)]


def _plugin_folders(root: str, *, resolve: bool) -> list[tuple[str, list[os.DirEntry[str]]]]:
    """Each plugin folder's manifest and the folder's entries, sorted by name: one
    directory listing per folder and no stat beyond what it tells, on plain strings (a
    start walks thousands of folders). ``resolve``: follow the links among the folders
    (``root`` is taken as given)."""
    found: list[tuple[str, list[os.DirEntry[str]]]] = []

    def walk(folder: str, depth: int) -> None:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_BY_NAME)
        names = {entry.name: entry for entry in entries}
        for manifest in FOLDER_MANIFESTS:
            entry = names.get(manifest)
            if entry is not None and entry.is_file():
                found.append((entry.path, entries))
                return
        if depth >= MAX_DEPTH:
            return
        for entry in entries:
            if entry.name[0] == "." or entry.name in _SKIPPED_DIRS or not entry.is_dir():
                continue
            walk(os.path.realpath(entry.path) if resolve and entry.is_symlink() else entry.path,
                 depth + 1)  # fmt: skip

    walk(root, 0)
    return found


def manifest_of(folder: Path) -> Path | None:
    for name in FOLDER_MANIFESTS:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def load_manifest(path: Path, *, source: SourceKind, trust: Trust) -> SourceResult:
    """The plugins one manifest file declares, located at its folder."""
    file = path.resolve()
    try:
        document = load_file(file)
    except ManifestError as exc:
        first = exc.problems[0]
        return SourceResult(
            failures=(LoadFailure(str(file), exc.code, exc.message, first.pointer),)
        )
    except (PlugyardError, OSError, UnicodeError, ValueError) as exc:
        return SourceResult(failures=(failure(str(file), exc),))
    plugins = tuple(
        RegisteredPlugin.of(
            descriptor,
            source,
            trust=trust,
            location=str(file.parent),
            manifest_path=str(file),
            dialect=dialect,
        )
        for descriptor, dialect in zip(document.plugins, document.dialects, strict=True)
    )
    return SourceResult(plugins=plugins)


def merge(results: Iterable[SourceResult]) -> SourceResult:
    """Results joined in order; a repeated id keeps its first plugin and reports the rest."""
    plugins: dict[str, RegisteredPlugin] = {}
    unchanged: set[int] = set()  # by identity
    failures: list[LoadFailure] = []
    skipped: list[str] = []
    for result in results:
        failures.extend(result.failures)
        skipped.extend(result.skipped)
        for plugin in (*result.plugins, *result.unchanged):
            plugin_id = plugin.id
            first = plugins.get(plugin_id)
            if first is None:
                plugins[plugin_id] = plugin
            else:
                failures.append(duplicate(plugin, first))
        unchanged.update(id(plugin) for plugin in result.unchanged)
    return SourceResult(
        plugins=tuple(p for p in plugins.values() if id(p) not in unchanged),
        failures=tuple(failures),
        skipped=tuple(skipped),
        unchanged=tuple(p for p in plugins.values() if id(p) in unchanged),
    )


def duplicate(plugin: RegisteredPlugin, first: RegisteredPlugin) -> LoadFailure:
    return LoadFailure(
        source=plugin.manifest_path or plugin.location or plugin.source,
        code="duplicate_plugin",
        message=f"plugin id {plugin.id!r} is already declared by "
        f"{first.manifest_path or first.location or first.source}",
    )


def failure(where: str, exc: BaseException) -> LoadFailure:
    """A failure from any exception: plugyard's carry their code, others are load errors."""
    if isinstance(exc, PlugyardError):
        return LoadFailure(where, exc.code, exc.message)
    return LoadFailure(where, "plugin_load_error", f"{type(exc).__name__}: {exc}")


def _missing(path: Path) -> LoadFailure:
    return LoadFailure(str(path), "manifest_not_found", "no such file or folder")
