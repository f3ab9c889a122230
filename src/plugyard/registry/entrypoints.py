"""Installed packages that offer plugins through the entry-point group ``plugyard.plugins``.

Only allowlisted packages are loaded: loading an entry point imports its module, which
runs third-party code. An allowlist item is a distribution name (``acme-tools``, any
spelling PEP 503 normalises to it) or one entry of it (``acme-tools:weather``).

An entry point resolves to one of:

- a folder or manifest path (``str`` or ``PathLike``, absolute) — read like a plugin folder;
- a module — its folder is read as a plugin folder (a package shipping its manifest);
- a :class:`PluginDescriptor`, or raw manifest / descriptor data (a mapping);
- a callable taking no arguments that returns any of the above, or an iterable of them.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import Distribution, EntryPoint, distributions
from pathlib import Path
from types import ModuleType
from typing import Any

from packaging.utils import canonicalize_name

from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.intake import read_plugins
from plugyard.registry.model import LoadFailure, RegisteredPlugin, Trust
from plugyard.registry.sources import SourceResult, failure, load_folder, merge

GROUP = "plugyard.plugins"
#: How deep an entry point's answer may nest (callables returning callables…).
_MAX_NESTING = 3


@dataclass(frozen=True)
class EntryPointSource:
    allow: frozenset[str]
    trust: Trust = "trusted"
    group: str = GROUP
    #: Where to look for installed distributions; ``None`` is ``sys.path``.
    path: Sequence[str] | None = field(default=None)

    @classmethod
    def of(
        cls,
        allow: Iterable[str],
        *,
        trust: Trust = "trusted",
        group: str = GROUP,
        path: Sequence[str] | None = None,
    ) -> EntryPointSource:
        return cls(frozenset(_allow_key(a) for a in allow), trust, group, path)

    @property
    def name(self) -> str:
        return f"entrypoint:{self.group}"

    def load(self) -> SourceResult:
        results: list[SourceResult] = []
        skipped: list[str] = []
        for dist, entry in self._entries():
            dist_name = canonicalize_name(dist.metadata["Name"] or "")
            label = f"{dist_name}:{entry.name}"
            if dist_name not in self.allow and f"{dist_name}:{entry.name}" not in self.allow:
                skipped.append(label)
                continue
            results.append(self._load_entry(label, entry))
        merged = merge(results)
        return SourceResult(merged.plugins, merged.failures, (*merged.skipped, *skipped))

    def _entries(self) -> list[tuple[Distribution, EntryPoint]]:
        seen: set[str] = set()
        found: list[tuple[Distribution, EntryPoint]] = []
        search = list(self.path) if self.path is not None else list(sys.path)
        for dist in distributions(path=search):
            name = canonicalize_name(dist.metadata["Name"] or "")
            # The first distribution of a name on the path is the one imports would use.
            if not name or name in seen:
                continue
            seen.add(name)
            found.extend((dist, ep) for ep in dist.entry_points.select(group=self.group))
        return sorted(
            found, key=lambda pair: (canonicalize_name(pair[0].metadata["Name"]), pair[1].name)
        )

    def _load_entry(self, label: str, entry: EntryPoint) -> SourceResult:
        where = f"entrypoint:{label}"
        try:
            target = entry.load()
            return self._resolve(where, target, origin=_origin(target), depth=0)
        except Exception as exc:
            return SourceResult(failures=(failure(where, exc),))

    def _resolve(self, where: str, target: Any, *, origin: str | None, depth: int) -> SourceResult:
        if isinstance(target, str | os.PathLike):
            path = Path(target)
            if not path.is_absolute():
                reason = f"entry point gave a relative path {str(target)!r}; give an absolute one"
                return SourceResult(failures=(LoadFailure(where, "plugin_load_error", reason),))
            return load_folder(path, source="entrypoint", trust=self.trust)
        if isinstance(target, ModuleType):
            return load_folder(_module_folder(target), source="entrypoint", trust=self.trust)
        if isinstance(target, PluginDescriptor):
            return SourceResult(plugins=(self._plugin(target, None, origin),))
        if isinstance(target, Mapping):
            read = read_plugins(dict(target))
            return SourceResult(
                plugins=tuple(self._plugin(d, dialect, origin) for d, dialect in read)
            )
        if depth >= _MAX_NESTING:
            reason = "entry point answers nest too deeply"
            return SourceResult(failures=(LoadFailure(where, "plugin_load_error", reason),))
        if callable(target):
            return self._resolve(where, target(), origin=origin, depth=depth + 1)
        if isinstance(target, Iterable):
            return merge(
                self._resolve(where, item, origin=origin, depth=depth + 1) for item in target
            )
        reason = f"entry point gave a {type(target).__name__}, not plugins"
        return SourceResult(failures=(LoadFailure(where, "plugin_load_error", reason),))

    def _plugin(
        self, descriptor: PluginDescriptor, dialect: str | None, origin: str | None
    ) -> RegisteredPlugin:
        return RegisteredPlugin.of(
            descriptor, "entrypoint", trust=self.trust, location=origin, dialect=dialect
        )


def _allow_key(item: str) -> str:
    dist, sep, entry = item.partition(":")
    return f"{canonicalize_name(dist)}{sep}{entry}"


def _origin(target: Any) -> str | None:
    """The folder of the code behind an entry point: the location of its plugins."""
    try:
        source = inspect.getsourcefile(target) if not isinstance(target, str) else None
    except TypeError:
        return None
    return str(Path(source).resolve().parent) if source else None


def _module_folder(module: ModuleType) -> Path:
    file = getattr(module, "__file__", None)
    if not file:
        raise ValueError(f"module {module.__name__} has no file")
    return Path(file).resolve().parent
