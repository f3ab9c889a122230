"""The built-in catalog: one operator file listing plugin folders (DS003 ``config/plugins.json``).

JSON or YAML::

    {"trust": "trusted",
     "plugins": ["plugins/tool/calculator",
                 {"path": "plugins/tool/weather", "enabled": false},
                 {"path": "../vendor/mailer", "trust": "untrusted"}]}

Paths are relative to the catalog file's folder (or the ``root`` given to the source);
each names a plugin folder, a folder of plugin folders, or a manifest file. ``trust``
on an entry overrides the catalog's default. A bad entry is reported and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.safeload import parse
from plugyard.registry.model import LoadFailure, SourceKind, Trust
from plugyard.registry.sources import FolderMemory, SourceResult, load_folder, merge


class CatalogEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    path: str = Field(min_length=1)
    enabled: bool = True
    trust: Trust | None = None


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    trust: Trust = "trusted"
    plugins: list[Any] = Field(default_factory=list)


@dataclass(frozen=True)
class CatalogSource:
    path: Path
    root: Path | None = None
    kind: SourceKind = "catalog"
    memory: FolderMemory | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.path}"

    def load(self) -> SourceResult:
        where = str(self.path)
        try:
            catalog = read_catalog(Path(self.path))
        except ManifestError as exc:
            pointer = exc.problems[0].pointer
            return SourceResult(failures=(LoadFailure(where, exc.code, exc.message, pointer),))
        base = Path(self.root) if self.root is not None else Path(self.path).parent
        results: list[SourceResult] = []
        for index, raw in enumerate(catalog.plugins):
            pointer = pointer_join("", "plugins", index)
            try:
                entry = _entry(raw)
            except ValidationError as exc:
                message = "; ".join(e["msg"] for e in exc.errors(include_url=False))
                failure = LoadFailure(where, "manifest_invalid_value", message, pointer)
                results.append(SourceResult(failures=(failure,)))
                continue
            if PurePath(entry.path).is_absolute():
                failure = LoadFailure(
                    where, "manifest_invalid_value", "catalog paths are relative", pointer
                )
                results.append(SourceResult(failures=(failure,)))
            elif not entry.enabled:
                results.append(SourceResult(skipped=(entry.path,)))
            else:
                trust = entry.trust or catalog.trust
                folder = base / entry.path
                results.append(
                    load_folder(folder, source=self.kind, trust=trust, memory=self.memory)
                )
        return merge(results)


def read_catalog(path: Path) -> Catalog:
    """The catalog file, parsed; every fault is a :class:`ManifestError` with a pointer."""
    if not path.is_file():
        raise ManifestError([Problem("manifest_not_found", "", "no such file")], path=str(path))
    try:
        document = parse(path.read_bytes()).documents[0]
    except ManifestError as exc:
        raise ManifestError(exc.problems, path=str(path)) from None
    if isinstance(document, list):
        document = {"plugins": document}
    try:
        return Catalog.model_validate(document)
    except ValidationError as exc:
        problems = [
            Problem("manifest_invalid_value", pointer_join("", *err["loc"]), err["msg"])
            for err in exc.errors(include_url=False)
        ]
        raise ManifestError(problems, path=str(path)) from None


def _entry(raw: Any) -> CatalogEntry:
    return CatalogEntry.model_validate({"path": raw} if isinstance(raw, str) else raw)
