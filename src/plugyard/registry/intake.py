"""Raw input into descriptors: where an unknown family is told apart from a bad manifest.

The canonical model cannot even hold an unknown family, so the check that DS003 asks of
the registry ("reject unsupported plugin types at registration") happens here, where
raw data — a manifest of any dialect, or a descriptor as JSON — enters. Both give
``unsupported_type`` for a family or MRP ``type`` plugyard does not know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from plugyard.errors import ManifestError, Problem, UnsupportedTypeError
from plugyard.manifest.dialects.canonical import SCHEMA_ID
from plugyard.manifest.load import detect, load_data
from plugyard.manifest.model import FAMILIES, PluginDescriptor
from plugyard.manifest.pointer import pointer_join

_FAMILY_POINTER = re.compile(r"^(/plugins)?(/\d+)?/family$")


def read_plugins(data: Any) -> tuple[tuple[PluginDescriptor, str], ...]:
    """The plugins raw ``data`` declares, each with its dialect.

    ``data`` is a manifest of any dialect or a canonical descriptor as JSON data (with
    or without ``$schema``). Raises :class:`UnsupportedTypeError` for an unknown family,
    :class:`ManifestError` for any other fault.
    """
    if isinstance(data, Mapping):
        check_family(data.get("family"))
        if detect(dict(data)) is None and "id" in data:
            data = {"$schema": SCHEMA_ID, **data}
    try:
        document = load_data([data])
    except ManifestError as exc:
        raise _as_unsupported(exc) or exc from None
    return tuple(zip(document.plugins, document.dialects, strict=True))


def descriptor_from_data(data: Mapping[str, Any]) -> PluginDescriptor:
    """A descriptor from the JSON data :meth:`PluginDescriptor.to_data` wrote.

    Trusted input (the store's own rows): validated by the model, without the schema
    checks a manifest goes through.
    """
    check_family(data.get("family"))
    try:
        return PluginDescriptor.model_validate(dict(data), strict=False)
    except ValidationError as exc:
        problems = [
            Problem(
                "manifest_invalid_value",
                pointer_join("", *err["loc"]),
                err["msg"],
            )
            for err in exc.errors(include_url=False)
        ]
        raise ManifestError(problems) from None


def check_family(family: Any) -> None:
    """Raise ``unsupported_type`` unless ``family`` is absent or one plugyard supports."""
    if family is not None and family not in FAMILIES:
        raise UnsupportedTypeError(
            f"unsupported plugin family {family!r}; supported: {', '.join(FAMILIES)}"
        )


def _as_unsupported(exc: ManifestError) -> UnsupportedTypeError | None:
    for problem in exc.problems:
        if problem.code == "unsupported_type" or (
            problem.code == "manifest_invalid_value" and _FAMILY_POINTER.match(problem.pointer)
        ):
            return UnsupportedTypeError(f"{problem.pointer}: {problem.message}")
    return None
