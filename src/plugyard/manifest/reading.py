"""What every dialect reader shares: typed field access that reports faults by pointer,
unknown-field capture, and the final build of the canonical descriptor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from plugyard.errors import Problem
from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.safeload import NumberText

#: The key under which an exporter stores canonical fields its dialect cannot express,
#: so that any dialect round trip is lossless.
OVERLAY_KEY = "x-plugyard"


class ReadContext:
    """Collects the warnings and errors of reading one document."""

    def __init__(self, document: int = 0) -> None:
        self.document = document
        self.warnings: list[Problem] = []
        self.errors: list[Problem] = []
        self.x: dict[str, Any] = {}
        # Files beside the manifest: HomeClaw config.yml (data), MRP plugin.kus.md (text).
        self.sidecars: dict[str, Any] = {}

    def warn(self, code: str, pointer: str, message: str) -> None:
        self.warnings.append(Problem(code, pointer, message, self.document))

    def error(self, code: str, pointer: str, message: str) -> None:
        self.errors.append(Problem(code, pointer, message, self.document))

    # typed access -------------------------------------------------------------------

    def text(self, value: Any, pointer: str) -> str | None:
        """A string field; numbers and booleans are read as the text they were written as."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, NumberText):
            self.warn("coerced_to_string", pointer, f"number {value.text} read as text")
            return value.text
        if isinstance(value, bool):
            self.warn("coerced_to_string", pointer, "boolean read as text")
            return "true" if value else "false"
        if isinstance(value, int | float):
            self.warn("coerced_to_string", pointer, f"number {value} read as text")
            return str(value)
        self.error("manifest_invalid_value", pointer, "expected a string")
        return None

    def required_text(self, data: Mapping[str, Any], key: str, pointer: str) -> str | None:
        here = pointer_join(pointer, key)
        value = self.text(data.get(key), here)
        if value is None or not value.strip():
            self.error("manifest_missing_field", here, f"'{key}' is required")
            return None
        return value

    def strings(self, value: Any, pointer: str) -> tuple[str, ...]:
        """A list of strings; a lone string is a list of one (``capability: MODEL``)."""
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,) if value.strip() else ()
        if not isinstance(value, list):
            self.error("manifest_invalid_value", pointer, "expected a list of strings")
            return ()
        out: list[str] = []
        for index, item in enumerate(value):
            text = self.text(item, pointer_join(pointer, index))
            if text is not None:
                out.append(text)
        return tuple(out)

    def boolean(self, value: Any, pointer: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {"true", "false"}:
            self.warn("coerced_to_boolean", pointer, "text read as a boolean")
            return value.lower() == "true"
        self.error("manifest_invalid_value", pointer, "expected a boolean")
        return None

    def integer(self, value: Any, pointer: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error("manifest_invalid_value", pointer, "expected an integer")
            return None
        if isinstance(value, float) and not value.is_integer():
            self.error("manifest_invalid_value", pointer, "expected an integer")
            return None
        return int(value)

    def number(self, value: Any, pointer: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error("manifest_invalid_value", pointer, "expected a number")
            return None
        return float(value)

    def mapping(self, value: Any, pointer: str) -> dict[str, Any] | None:
        if value is None or isinstance(value, dict):
            return value
        self.error("manifest_invalid_value", pointer, "expected a mapping")
        return None

    def items(self, value: Any, pointer: str) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.error("manifest_invalid_value", pointer, "expected a list")
        return []

    def keep(self, pointer: str, value: Any) -> None:
        """Keep a known field the canonical model has no place for (no warning)."""
        self.x[pointer] = value

    def unknown(self, data: Mapping[str, Any], known: Iterable[str], pointer: str) -> None:
        """Keep fields this reader does not know in ``x``, each with a warning."""
        known_keys = set(known) | {OVERLAY_KEY}
        for key, value in data.items():
            if key not in known_keys:
                here = pointer_join(pointer, key)
                self.x[here] = value
                self.warn("unknown_field", here, f"'{key}' is not a known field; kept in x")

    # building -----------------------------------------------------------------------

    def build(
        self,
        fields: dict[str, Any],
        pointers: Mapping[str, str],
        overlay: Any = None,
        overlay_pointer: str = "",
    ) -> PluginDescriptor | None:
        """Validate ``fields`` as a canonical descriptor, mapping faults back to source."""
        data = {key: value for key, value in fields.items() if value is not None}
        if self.x:
            data["x"] = dict(self.x)
        if overlay is not None:
            if isinstance(overlay, dict):
                data.update(overlay)
            else:
                self.error("manifest_invalid_value", overlay_pointer, "expected a mapping")
        if self.errors:
            return None
        try:
            return PluginDescriptor.model_validate(data, strict=False)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc = err["loc"]
                head = str(loc[0]) if loc else ""
                base = pointers.get(head, overlay_pointer if overlay else "")
                tail = loc[1:] if head in pointers else loc
                pointer = pointer_join(base, *[t for t in tail if isinstance(t, str | int)])
                code = (
                    "manifest_missing_field"
                    if err["type"] == "missing"
                    else ("manifest_invalid_value")
                )
                self.error(code, pointer, err["msg"])
            return None
