"""Read manifests of any dialect from text, data, files and folders.

The dialect is detected from the data itself. A file may hold several plugins: a
multi-document YAML stream, a top-level list, or a catalog with a ``plugins:`` array;
each entry is detected on its own. Reading writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.dialects import DIALECTS, Dialect
from plugyard.manifest.hints import unknown_dialect_message
from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.reading import ReadContext
from plugyard.manifest.safeload import parse

#: File names read as manifests when a folder is walked. Catalogs that only list plugin
#: modules (MRP-VM ``config/plugins.json``) are not manifests; name such a file
#: explicitly to have it checked.
MANIFEST_NAMES = frozenset(
    {
        "plugin.yaml", "plugin.yml", "plugin.json", "manifest.yaml", "manifest.yml",
        "manifest.json", "manifest.py", "external_plugins.json",
    }
)  # fmt: skip
#: Files read beside a manifest: HomeClaw runtime config and MRP knowledge units.
SIDECAR_NAMES = ("config.yml", "config.yaml", "plugin.kus.md", "index.mjs")


@dataclass(frozen=True)
class ManifestDocument:
    """The plugins one manifest file declares."""

    path: str | None
    dialect: str
    syntax: str
    plugins: tuple[PluginDescriptor, ...]
    dialects: tuple[str, ...] = ()
    warnings: tuple[Problem, ...] = field(default_factory=tuple)


def detect(data: Any) -> Dialect | None:
    """The dialect ``data`` looks most like, or ``None``."""
    if not isinstance(data, dict):
        return None
    best: tuple[int, Dialect | None] = (0, None)
    for dialect in DIALECTS:
        score = dialect.score(data)
        if score > best[0]:
            best = (score, dialect)
    return best[1]


def _entries(document: Any) -> Iterator[tuple[str, Any]]:
    """Split a document into plugin entries, each with its pointer."""
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield pointer_join("", index), item
    elif (
        isinstance(document, dict)
        and isinstance(document.get("plugins"), list)
        and detect(document) is None
    ):
        for index, item in enumerate(document["plugins"]):
            yield pointer_join("", "plugins", index), item
    else:
        yield "", document


def _prefixed(problems: list[Problem], base: str) -> list[Problem]:
    return [Problem(p.code, base + p.pointer, p.message, p.document) for p in problems]


def load_data(
    documents: tuple[Any, ...] | list[Any],
    *,
    path: str | None = None,
    syntax: str = "data",
    sidecars: Mapping[str, Any] | None = None,
    warnings: tuple[Problem, ...] = (),
) -> ManifestDocument:
    """Read already-parsed documents; raises :class:`ManifestError` with every fault."""
    plugins: list[PluginDescriptor] = []
    found: list[str] = []
    problems: list[Problem] = []
    notes = list(warnings)
    for index, document in enumerate(documents):
        for base, entry in _entries(document):
            dialect = detect(entry)
            if dialect is None:
                message = unknown_dialect_message(entry)
                problems.append(Problem("manifest_unknown_dialect", base, message, index))
                continue
            ctx = ReadContext(index)
            ctx.sidecars = dict(sidecars or {})
            read = dialect.read(entry, ctx)
            problems.extend(_prefixed(ctx.errors, base))
            notes.extend(_prefixed(ctx.warnings, base))
            if not ctx.errors:
                plugins.extend(read)
                found.extend(dialect.name for _ in read)
    if problems:
        raise ManifestError(problems, path=path or "")
    if not plugins:
        raise ManifestError([Problem("manifest_empty", "", "no plugin declared")], path=path or "")
    ids = [p.id for p in plugins]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        notes.append(Problem("duplicate_id", "", f"plugin id {dup!r} declared more than once"))
    kinds = tuple(dict.fromkeys(found))
    return ManifestDocument(
        path=path,
        dialect=kinds[0] if len(kinds) == 1 else "mixed",
        syntax=syntax,
        plugins=tuple(plugins),
        dialects=tuple(found),
        warnings=tuple(notes),
    )


def load_text(
    raw: bytes | str, *, path: str | None = None, sidecars: Mapping[str, Any] | None = None
) -> ManifestDocument:
    """Parse and read one manifest text of any dialect."""
    try:
        parsed = parse(raw)
    except ManifestError as exc:
        raise ManifestError(exc.problems, path=path or "") from None
    return load_data(
        parsed.documents,
        path=path,
        syntax=parsed.syntax,
        sidecars=sidecars,
        warnings=parsed.warnings,
    )


def read_sidecars(folder: Path) -> dict[str, Any]:
    """The sidecar files beside a manifest, parsed (YAML) or as text (Markdown)."""
    out: dict[str, Any] = {}
    for name in SIDECAR_NAMES:
        candidate = folder / name
        if not candidate.is_file():
            continue
        if name.endswith(".mjs"):
            out[name] = True  # code: only that it is there matters to a reader
            continue
        raw = candidate.read_bytes()
        if name.endswith(".md"):
            out[name] = raw.decode("utf-8", "replace")
        else:
            out[name] = parse(raw).documents[0]
    return out


def load_file(path: Path | str) -> ManifestDocument:
    file = Path(path)
    if not file.is_file():
        raise ManifestError([Problem("manifest_not_found", "", "no such file")], path=str(file))
    try:
        sidecars = read_sidecars(file.parent) if file.name in MANIFEST_NAMES else {}
    except ManifestError as exc:
        raise ManifestError(exc.problems, path=str(file)) from None
    return load_text(file.read_bytes(), path=str(file), sidecars=sidecars)


def manifest_files(root: Path | str) -> list[Path]:
    """The manifest files under ``root`` (itself, if a file), in a stable order."""
    base = Path(root)
    if base.is_file():
        return [base]
    if not base.is_dir():
        return [base]
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file() and p.name in MANIFEST_NAMES and not _hidden(p, base)
    )


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)
