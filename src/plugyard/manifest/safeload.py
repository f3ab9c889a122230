"""Parse untrusted manifest text into plain JSON data, refusing hostile documents.

Every refusal is a :class:`~plugyard.errors.Problem` with a stable code and a JSON
pointer. Limits are checked before the costly step they protect: the byte size before
decoding; nesting and alias expansion on the YAML node graph before construction
(see :mod:`plugyard.manifest.yamlsafe`). Python manifests are read with ``ast``, never
run; JavaScript object literals by a small reader that evaluates nothing.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings as warnings_module
from dataclasses import dataclass
from typing import Any, Literal

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.jsliteral import JsLiteralError, parse_js_literal
from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.yamlsafe import MAX_DEPTH, MAX_NODES, NumberText, parse_yaml

Syntax = Literal["json", "yaml", "python", "js"]

MAX_BYTES = 1024 * 1024
PLACEHOLDER = "..."
__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "NumberText", "Parsed", "decode", "parse"]
_PY_MANIFEST = re.compile(r"^PLUGIN_MANIFEST\s*(?::[^=\n]*)?=", re.MULTILINE)
_ELIDED_LINE = re.compile(r"^\s*\.\.\.\s*,?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Parsed:
    """The documents of one text, as plain JSON data, and the warnings met on the way."""

    syntax: Syntax
    documents: tuple[Any, ...]
    warnings: tuple[Problem, ...]


class _NonFinite:
    """Stands in for NaN/Infinity in JSON until the walk reports where it was."""


class _DupDict(dict[str, Any]):
    duplicates: list[str]


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = _DupDict()
    out.duplicates = []
    for key, value in pairs:
        if key in out:
            out.duplicates.append(key)
        out[key] = value
    return out


# --------------------------------------------------------------------------- Python


def _ast_parse(text: str) -> ast.Module:
    # Untrusted text must not print warnings (invalid escapes) into the host's logs.
    with warnings_module.catch_warnings():
        warnings_module.simplefilter("ignore")
        return ast.parse(text)


def _parse_python(text: str) -> tuple[list[Any], list[Problem]]:
    warnings: list[Problem] = []
    try:
        module = _ast_parse(text)
    except (SyntaxError, ValueError):
        # Documentation often elides entries with a bare "...," line; read around it.
        stripped = _ELIDED_LINE.sub("", text)
        try:
            module = _ast_parse(stripped)
        except (SyntaxError, ValueError) as exc:
            raise ManifestError([Problem("manifest_syntax", "", f"Python: {exc}")]) from None
        warnings.append(Problem("placeholder_value", "", "elided '...' entries were skipped"))
    for stmt in module.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and target.id == "PLUGIN_MANIFEST" and value is not None:
            try:
                return [ast.literal_eval(value)], warnings
            except (ValueError, TypeError, SyntaxError) as exc:
                raise ManifestError(
                    [Problem("manifest_no_python_manifest", "", f"not a literal: {exc}")]
                ) from None
    raise ManifestError(
        [Problem("manifest_no_python_manifest", "", "no PLUGIN_MANIFEST = {...} assignment")]
    )


# --------------------------------------------------------------------------- the walk


def _normalise(data: Any, document: int, warnings: list[Problem]) -> tuple[Any, list[Problem]]:
    """Turn parser output into plain JSON data; report what JSON cannot hold."""
    problems: list[Problem] = []

    def walk(value: Any, pointer: str, level: int) -> Any:
        if level > MAX_DEPTH:
            problems.append(Problem("manifest_too_deep", pointer, "nesting too deep", document))
            return None
        if isinstance(value, _DupDict):
            for key in value.duplicates:
                problems.append(
                    Problem(
                        "manifest_duplicate_key", pointer_join(pointer, key), "repeated", document
                    )
                )
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    problems.append(
                        Problem("manifest_invalid_key", pointer, f"key {key!r}", document)
                    )
                    continue
                child = pointer_join(pointer, key)
                if _is_placeholder(item) or (key == PLACEHOLDER and item is None):
                    warnings.append(Problem("placeholder_value", child, "placeholder", document))
                    continue
                out[key] = walk(item, child, level + 1)
            return out
        if isinstance(value, list | tuple):
            items: list[Any] = []
            for index, item in enumerate(value):
                if _is_placeholder(item):
                    warnings.append(
                        Problem(
                            "placeholder_value",
                            pointer_join(pointer, index),
                            "placeholder",
                            document,
                        )
                    )
                    continue
                items.append(walk(item, pointer_join(pointer, index), level + 1))
            return items
        if isinstance(value, _NonFinite) or (isinstance(value, float) and not math.isfinite(value)):
            problems.append(Problem("manifest_non_finite", pointer, "NaN or infinity", document))
            return None
        if value is None or isinstance(value, str | bool | int | float):
            return value
        problems.append(
            Problem("manifest_invalid_value", pointer, f"{type(value).__name__}", document)
        )
        return None

    return walk(data, "", 0), problems


def _is_placeholder(value: Any) -> bool:
    return value is Ellipsis or (isinstance(value, str) and value.strip() == PLACEHOLDER)


def decode(raw: bytes | str) -> str:
    if isinstance(raw, str):
        if len(raw.encode("utf-8", "surrogatepass")) > MAX_BYTES:
            raise ManifestError([Problem("manifest_too_large", "", f"over {MAX_BYTES} bytes")])
        text = raw
    else:
        if len(raw) > MAX_BYTES:
            raise ManifestError([Problem("manifest_too_large", "", f"over {MAX_BYTES} bytes")])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ManifestError(
                [Problem("manifest_encoding", "", f"not UTF-8 at byte {exc.start}")]
            ) from None
    text = text.removeprefix("\ufeff")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise ManifestError([Problem("manifest_encoding", "", "lone surrogate")])
    if "\x00" in text:
        raise ManifestError([Problem("manifest_encoding", "", "NUL character")])
    return text


def parse(raw: bytes | str) -> Parsed:
    """Parse one manifest text (JSON, YAML incl. multi-document, Python, JS literal)."""
    text = decode(raw)
    syntax: Syntax
    warnings: list[Problem] = []
    try:
        if _PY_MANIFEST.search(text):
            syntax = "python"
            documents, warnings = _parse_python(text)
        elif text.lstrip().startswith(("{", "[")):
            syntax, documents, warnings = _parse_braced(text)
        else:
            syntax = "yaml"
            documents, warnings = parse_yaml(text)
    except RecursionError:
        raise ManifestError([Problem("manifest_too_deep", "", "nesting too deep")]) from None
    except MemoryError:
        raise ManifestError([Problem("manifest_too_large", "", "document too large")]) from None
    problems: list[Problem] = []
    clean: list[Any] = []
    for index, document in enumerate(documents):
        data, found = _normalise(document, index, warnings)
        problems.extend(found)
        clean.append(data)
    if problems:
        raise ManifestError(problems)
    if not clean:
        raise ManifestError([Problem("manifest_empty", "", "no document")])
    return Parsed(syntax, tuple(clean), tuple(warnings))


def _parse_braced(text: str) -> tuple[Syntax, list[Any], list[Problem]]:
    try:
        data = json.loads(
            text,
            object_pairs_hook=_json_pairs,
            parse_constant=lambda _: _NonFinite(),
            parse_float=NumberText,
        )
        return "json", [data], []
    except ValueError:
        pass  # not JSON: a YAML flow document or a JavaScript object literal
    try:
        documents, warnings = parse_yaml(text)
        return "yaml", documents, warnings
    except ManifestError as yaml_error:
        if yaml_error.code != "manifest_syntax":
            raise
        try:
            data = parse_js_literal(text, max_depth=MAX_DEPTH)
        except JsLiteralError as exc:
            raise ManifestError([Problem("manifest_syntax", "", f"JavaScript: {exc}")]) from None
        return "js", [data], []
