"""The one exception tree of plugyard and its closed set of error codes.

This module imports nothing else from the package, so every layer can raise and catch
these. Every code is stable, documented in ``docs/errors.md`` (a test keeps the two in
step) and maps to exactly one HTTP status, which the server uses in a single handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """What one error code means and which HTTP status carries it."""

    http_status: int
    summary: str


# The closed set. Adding a code is an API change: document it in docs/errors.md.
ERROR_CODES: dict[str, ErrorSpec] = {
    # Manifest documents (the contract layer).
    "manifest_too_large": ErrorSpec(413, "The document exceeds the size or node-count cap."),
    "manifest_encoding": ErrorSpec(422, "The document is not valid UTF-8 text."),
    "manifest_syntax": ErrorSpec(422, "The document is not well-formed YAML, JSON or Python."),
    "manifest_yaml_tag": ErrorSpec(422, "The YAML uses a tag outside the JSON-compatible set."),
    "manifest_duplicate_key": ErrorSpec(422, "A mapping repeats a key."),
    "manifest_non_finite": ErrorSpec(422, "A number is NaN or infinite."),
    "manifest_too_deep": ErrorSpec(422, "The document nests deeper than allowed."),
    "manifest_invalid_key": ErrorSpec(422, "A mapping key is not a string."),
    "manifest_unknown_dialect": ErrorSpec(422, "No manifest dialect matches the document."),
    "manifest_empty": ErrorSpec(422, "The document holds no manifest."),
    "manifest_missing_field": ErrorSpec(422, "A required field is absent."),
    "manifest_invalid_value": ErrorSpec(422, "A field has the wrong type or an invalid value."),
    "manifest_invalid_schema": ErrorSpec(422, "A JSON Schema in the manifest is not valid."),
    "manifest_no_python_manifest": ErrorSpec(
        422, "The Python file assigns no literal PLUGIN_MANIFEST dict."
    ),
    "manifest_not_found": ErrorSpec(404, "The manifest path does not exist."),
    "unsupported_type": ErrorSpec(422, "The plugin family is not one plugyard supports."),
    "export_unsupported": ErrorSpec(422, "The descriptor cannot be written in that format."),
    "internal_error": ErrorSpec(500, "An unexpected failure inside plugyard."),
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One fault (or warning) found in a document.

    ``pointer`` is an RFC 6901 JSON pointer into the document as written; ``document``
    is the index of the document inside a multi-document YAML stream.
    """

    code: str
    pointer: str
    message: str
    document: int = 0

    def as_dict(self) -> dict[str, str | int]:
        return {
            "code": self.code,
            "pointer": self.pointer,
            "message": self.message,
            "document": self.document,
        }


class PlugyardError(Exception):
    """Base of every error plugyard raises on purpose."""

    default_code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        self.message = message

    @property
    def http_status(self) -> int:
        spec = ERROR_CODES.get(self.code)
        return spec.http_status if spec else 500


class ManifestError(PlugyardError):
    """A manifest was refused; ``problems`` lists every fault with its pointer."""

    default_code = "manifest_invalid_value"

    def __init__(self, problems: list[Problem] | tuple[Problem, ...], *, path: str = "") -> None:
        if not problems:
            raise ValueError("ManifestError needs at least one problem")
        first = problems[0]
        where = f"{path}: " if path else ""
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            f"{where}{first.code} at '{first.pointer}': {first.message}{more}", code=first.code
        )
        self.problems = tuple(problems)
        self.path = path


class ExportError(PlugyardError):
    """A descriptor cannot be expressed in the requested format."""

    default_code = "export_unsupported"


class UnsupportedTypeError(PlugyardError):
    """A plugin family outside tool, sd, kb, gs, val and plan."""

    default_code = "unsupported_type"
