"""Plain documents the retrieval engine indexes, and the fields it reads.

The engine never sees a registry: the caller flattens a plugin (or one
operation) into a `Document`. Retrieval scores three fields separately and
averages them, because one vector for the whole text let long
`description_long` texts drown the name and the short description
(DISCOVERY_LAB.md: mean of per-field scores beat one concatenated text by
3 points of recall@5 and 12 of COMP@5 on the DEV split).

An absent field borrows the next shorter one (`filled_fields`), for BM25 and for
the document vector alike: otherwise an entry without a long description is
scored on its name for half, and short names ("HDB Car Park") are the noisiest
text an entry has.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

# Fixed order: vector rows and BM25 indexes are kept per field in this order.
FIELDS: tuple[str, ...] = ("name", "description", "details")
# How indexed text becomes a vector. It is part of the content hash, so a
# vector stored under an older recipe is never reused as if it were current.
RECIPE = "fields-filled-v2"


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable entry: a plugin, or one operation of a plugin."""

    doc_id: str
    name: str
    description: str = ""
    description_long: str | None = None
    operations: Sequence[str] = field(default=())
    parameters: Sequence[str] = field(default=())
    tags: Sequence[str] = field(default=())

    def fields(self) -> dict[str, str]:
        """Text per field; an empty string means the field is absent."""
        name = self.name
        if self.tags:
            name = f"{name} ({', '.join(self.tags)})"
        details: list[str] = []
        if self.description_long and self.description_long.strip() != self.description.strip():
            details.append(self.description_long)
        # Operations come before parameter names: the model reads only the
        # first 256 tokens, and operation sentences say more than names do.
        details.extend(self.operations)
        if self.parameters:
            details.append("Parameters: " + ", ".join(self.parameters))
        return {
            "name": name.strip(),
            "description": self.description.strip(),
            "details": " ".join(d.strip() for d in details if d.strip()),
        }

    def filled_fields(self) -> dict[str, str]:
        """`fields()` with an absent field borrowing the next shorter one:
        no description reads the name, no details read the description."""
        texts = self.fields()
        texts["description"] = texts["description"] or texts["name"]
        texts["details"] = texts["details"] or texts["description"]
        return texts

    def content_hash(self) -> str:
        """Changes exactly when some indexed text (or the RECIPE) changes."""
        payload = json.dumps({**self.fields(), "": RECIPE}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()


def from_mapping(doc_id: str, data: dict[str, object]) -> Document:
    """Build a Document from a loose mapping such as a JSONL row."""

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    def texts(key: str) -> tuple[str, ...]:
        value = data.get(key)
        if isinstance(value, (list, tuple)):
            return tuple(str(v) for v in value)
        return ()

    long = data.get("description_long")
    return Document(
        doc_id=doc_id,
        name=text("name") or doc_id,
        description=text("description"),
        description_long=long if isinstance(long, str) else None,
        operations=texts("operations"),
        parameters=texts("parameters"),
        tags=texts("tags"),
    )
