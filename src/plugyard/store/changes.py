"""The change log replicas follow: what changed in the shared tables, in commit order.

Rows are written by triggers (migration 0008), never by this module, so every writer
records its changes. A reader keeps the last ``seq`` it applied and asks for what came
after: that one number is the whole catch-up state, after a lost connection as much as
after a NOTIFY.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import func, select

from plugyard.store.schema import changes

if TYPE_CHECKING:
    from plugyard.store.store import Store

#: The NOTIFY channel the triggers send each new ``seq`` on (PostgreSQL).
CHANNEL = "plugyard_changes"


@dataclass(frozen=True, slots=True)
class Change:
    seq: int
    topic: str  # the table: plugins, api_keys, api_subjects, policies, mcp_tool_pins
    subject: str  # the row's id (a policy's seq, a pin's plugin id)


class ChangeLog(Protocol):
    def latest(self) -> int:
        """The newest ``seq`` (0: none yet)."""
        ...

    def after(self, seq: int, limit: int = 1000) -> Sequence[Change]:
        """Up to ``limit`` changes newer than ``seq``, oldest first."""
        ...


class MemoryChangeLog:
    """For tests and a store-less yard: changes appended by hand."""

    def __init__(self) -> None:
        self._rows: list[Change] = []
        self._lock = threading.Lock()

    def append(self, topic: str, subject: str) -> Change:
        with self._lock:
            change = Change(len(self._rows) + 1, topic, subject)
            self._rows.append(change)
        return change

    def latest(self) -> int:
        return len(self._rows)

    def after(self, seq: int, limit: int = 1000) -> Sequence[Change]:
        return tuple(self._rows[max(seq, 0) : max(seq, 0) + limit])


class SqlChangeLog:
    def __init__(self, store: Store) -> None:
        self._store = store

    def latest(self) -> int:
        with self._store.reading() as connection:
            return int(connection.execute(select(func.max(changes.c.seq))).scalar() or 0)

    def after(self, seq: int, limit: int = 1000) -> Sequence[Change]:
        query = (
            select(changes.c.seq, changes.c.topic, changes.c.subject)
            .where(changes.c.seq > seq)
            .order_by(changes.c.seq)
            .limit(limit)
        )
        with self._store.reading() as connection:
            return tuple(Change(int(s), t, x) for s, t, x in connection.execute(query))
