"""Plugin rows and the repository that keeps them.

The store knows rows, not descriptors: the registry turns a registered plugin into a
:class:`PluginRow` and back, so this layer stays below it. Every write happens in one
transaction: it lands whole or not at all, and a failure raises ``StoreError``.

A write may carry a *check*: a function that sees the row currently stored (inside the
write's transaction, locked) and the row about to be written, and says whether to write
(``True``), to leave the stored row as it is (``False``), or refuses by raising — which
rolls the whole write back. This is how the registry's rules are applied to what the
database holds, not to a possibly stale copy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, Protocol

#: ``check(stored, incoming)``: write ``incoming`` over ``stored`` (``None``: no row yet)?
Check = Callable[["PluginRow | None", "PluginRow"], bool]
#: ``check(stored)``: remove this row?
RemoveCheck = Callable[["PluginRow"], bool]
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PluginRow:
    """One row of the ``plugins`` table.

    ``descriptor`` is the canonical descriptor as JSON data (``PluginDescriptor.to_data()``);
    ``stamp`` names the descriptor model that validated it (``None``: unknown, as in rows
    written before stamps). The timestamps are set by the repository; a row given to a
    write leaves them ``None``.
    """

    id: str
    family: str
    source: str
    descriptor: Mapping[str, Any]
    content_hash: str
    version: str | None = None
    trust: str = "trusted"
    location: str | None = None
    manifest_path: str | None = None
    dialect: str | None = None
    available: bool = True
    unavailable_reason: str | None = None
    registered_at: datetime | None = None
    updated_at: datetime | None = None
    stamp: str | None = None

    def same_entry(self, other: PluginRow) -> bool:
        """Equal in everything but the timestamps and the stamp (bookkeeping: a row
        re-validated under a newer model is still the same entry)."""
        return all(
            getattr(self, f.name) == getattr(other, f.name)
            for f in fields(self)
            if f.name not in _BOOKKEEPING
        )

    def values(self) -> dict[str, Any]:
        """Column values, timestamps excluded."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _TIMESTAMPS}


_TIMESTAMPS = frozenset({"registered_at", "updated_at"})
_BOOKKEEPING = _TIMESTAMPS | {"stamp"}


@dataclass(frozen=True, slots=True)
class Written:
    """The outcome of one row's write: what is stored now and what was before.

    ``written`` is false when the check chose to leave the stored row as it was.
    """

    row: PluginRow | None
    previous: PluginRow | None
    written: bool


class PluginRepository(Protocol):
    """Where plugin rows persist. Reads see only committed writes."""

    def get(self, plugin_id: str) -> PluginRow | None: ...

    def list(
        self, *, family: str | None = None, source: str | None = None, timestamps: bool = True
    ) -> tuple[PluginRow, ...]:
        """Rows ordered by id, optionally of one family or source kind; without their
        timestamps (``None``) when ``timestamps`` is false, which may be quicker."""
        ...

    def upsert(self, row: PluginRow, *, check: Check | None = None) -> Written: ...

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        """Write several rows in one transaction; ``check`` is applied to each."""
        ...

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        """Remove a row; returns it, or ``None`` when there was none (or check said no)."""
        ...

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        """Change only the availability columns; ``None`` when no such row exists."""
        ...

    def restamp(self, rows: Sequence[tuple[str, str]], stamp: str) -> None:
        """Set the ``stamp`` of each row ``(id, content hash)`` still holding that hash."""
        ...
