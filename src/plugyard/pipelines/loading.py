"""Text or data → a :class:`DocumentModel`, with every shape fault and its pointer.

The text is parsed by the same hostile-input-safe reader as manifests (size, depth and
alias caps, duplicate keys, NaN refused). The dialect is told from the data: an OLO
engine config is mapped first (:mod:`plugyard.pipelines.olo`). Faults always point
into the document as its author wrote it.

The mode says how strictly: ``strict`` (plugyard's own documents, the console editor)
refuses every placement fault; ``engine`` reads and checks as OLO's engine does
(docs/pipelines.md, "Engine mode"); ``auto`` is engine mode for an OLO engine config
and strict for anything else — the file's shape says which it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import ValidationError

from plugyard.errors import ManifestError, Problem
from plugyard.manifest import safeload
from plugyard.manifest.pointer import pointer_join
from plugyard.pipelines.model import DocumentModel
from plugyard.pipelines.olo import read_olo
from plugyard.pipelines.olo_names import is_olo

Dialect = Literal["plugyard", "olo"]
Mode = Literal["strict", "engine", "auto"]


@dataclass(frozen=True)
class Loaded:
    """A parsed document (``None`` when its shape is wrong) and what was found."""

    document: DocumentModel | None
    dialect: Dialect
    faults: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict)
    #: The document as data, in its own dialect (what a store keeps).
    source: Mapping[str, Any] | None = None
    #: Read (and to be checked) as OLO's engine does, not strictly.
    engine: bool = False

    def origin(self, pointer: str) -> str:
        """Where a pointer of the plugyard document points in the source document."""
        if not self.origins:
            return pointer
        probe = pointer
        while True:
            found = self.origins.get(probe)
            if found is not None:
                return found
            if not probe:
                return pointer
            probe = probe.rsplit("/", 1)[0]


def load(source: str | bytes | Mapping[str, Any], mode: Mode = "strict") -> Loaded:
    """Read a pipeline document from text (YAML or JSON) or already-parsed data."""
    if isinstance(source, Mapping):
        data: Any = dict(source)
        refused = _unsafe(data)
        if refused is not None:
            return Loaded(None, "plugyard", (refused,))
    else:
        try:
            parsed = safeload.parse(source)
        except ManifestError as exc:
            return Loaded(None, "plugyard", exc.problems)
        if len(parsed.documents) != 1:
            fault = Problem("invalid_value", "", "a pipeline file holds one document")
            return Loaded(None, "plugyard", (fault,))
        data = parsed.documents[0]
    if not isinstance(data, dict):
        return Loaded(None, "plugyard", (Problem("invalid_value", "", "not an object"),))
    olo = is_olo(data)
    engine = mode == "engine" or (mode == "auto" and olo)
    if olo:
        converted = read_olo(data, engine=engine)
        loaded = _validate(converted.data, "olo", converted.origins)
        faults = (*converted.faults, *loaded.faults)
        warnings = (*converted.warnings, *loaded.warnings)
        document = loaded.document if not converted.faults else None
        return Loaded(document, "olo", faults, warnings, converted.origins, data, engine)
    return replace(_validate(data, "plugyard", {}), source=data, engine=engine)


def _validate(data: dict[str, Any], dialect: Dialect, origins: dict[str, str]) -> Loaded:
    try:
        document = DocumentModel.model_validate(data)
    except ValidationError as exc:
        mapped = Loaded(None, dialect, (), (), origins)
        faults: dict[tuple[str, str], Problem] = {}
        for error in exc.errors():
            pointer, missing = _pointer(data, error["loc"])
            code, message = _describe(error["type"], error["msg"], missing)
            fault = Problem(code, mapped.origin(pointer), message)
            faults.setdefault((fault.pointer, fault.code), fault)
        return Loaded(None, dialect, tuple(faults.values()), (), origins)
    return Loaded(document, dialect, (), (), origins)


def _pointer(data: Any, loc: tuple[int | str, ...]) -> tuple[str, str | None]:
    """Follow an error's location through the data. Steps that are not in the data are
    union tags or a missing field's name; the last of these is returned as well."""
    pointer, node, skipped = "", data, None
    for step in loc:
        in_dict = isinstance(node, dict) and isinstance(step, str) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if in_dict or in_list:
            node = node[step]
        else:
            skipped = str(step)
            continue
        pointer = pointer_join(pointer, step)
    return pointer, skipped


def _describe(kind: str, message: str, missing: str | None) -> tuple[str, str]:
    if kind == "missing":
        return "missing_field", f"missing {missing!r}"
    if kind == "extra_forbidden":
        return "unknown_field", "not a field of this object"
    return "invalid_value", message


def _unsafe(data: Any) -> Problem | None:
    """Data parsed elsewhere (a request body, a stored row) meets the caps text meets:
    depth, node count, JSON types. Walked without recursion; exact type tests first,
    since JSON parsers build exactly these types."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        if depth >= safeload.MAX_DEPTH:
            return Problem("manifest_too_deep", "", "nesting too deep")
        if seen > safeload.MAX_NODES:
            return Problem("manifest_too_large", "", "too many nodes")
        if isinstance(value, dict):
            for key, item in value.items():
                if type(key) is not str:
                    return Problem("manifest_invalid_key", "", "a key is not a string")
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend([(item, depth + 1) for item in value])
        elif isinstance(value, float):
            if not math.isfinite(value):
                return Problem("manifest_non_finite", "", "NaN or infinity")
        elif not isinstance(value, str | int):
            return Problem("invalid_value", "", f"{type(value).__name__} is not JSON")
    return None
