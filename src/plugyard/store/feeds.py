"""Feed rows: scheduled operations, their owner, their last result and cursor.

A run is claimed by moving ``next_run_at`` forward with a conditional ``UPDATE`` (the
old value in the ``WHERE``), so two schedulers — two replicas — never run one tick twice.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class FeedRow:
    id: str
    owner: str
    roles: tuple[str, ...]
    plugin_id: str
    operation: str
    params: Any
    interval_s: float | None
    cron: str | None
    enabled: bool
    next_run_at: float
    created_at: float
    last_run_at: float | None = None
    last_status: str | None = None
    last_result: Any = None
    next_cursor: str | None = None
    runs: int = 0

    def summary(self) -> dict[str, Any]:
        """What listings show of a feed (the CLI and the REST API alike)."""
        return {
            "id": self.id,
            "owner": self.owner,
            "plugin_id": self.plugin_id,
            "operation": self.operation,
            "interval_s": self.interval_s,
            "cron": self.cron,
            "enabled": self.enabled,
            "next_run_at": self.next_run_at,
            "runs": self.runs,
            "last_status": self.last_status,
            "next_cursor": self.next_cursor,
        }


class FeedRepository(Protocol):
    def create(self, row: FeedRow) -> None: ...

    def get(self, feed_id: str) -> FeedRow | None: ...

    def all(self, owner: str | None = None) -> list[FeedRow]: ...

    def due(self, now: float, limit: int = 100) -> list[FeedRow]: ...

    def claim(self, feed_id: str, expected_next: float, next_run_at: float) -> bool:
        """Move ``next_run_at`` from ``expected_next`` on; ``True`` for the one winner."""
        ...

    def record(
        self, feed_id: str, at: float, status: str, result: Any, next_cursor: str | None
    ) -> None: ...

    def delete(self, feed_id: str) -> bool: ...

    def set_enabled(self, feed_id: str, enabled: bool) -> bool: ...


_NAMES = [f.name for f in fields(FeedRow)]
_COLUMNS = ", ".join(_NAMES)


class SqlFeedRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def create(self, row: FeedRow) -> None:
        values = {n: getattr(row, n) for n in _NAMES}
        for name in ("roles", "params", "last_result"):
            value = values[name]
            values[name] = json_in(list(value) if name == "roles" else value)
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO feeds ({_COLUMNS}) VALUES ({', '.join(':' + n for n in _NAMES)})",
                values,
            )

    def get(self, feed_id: str) -> FeedRow | None:
        with self._db.read() as tx:
            found = tx.one(f"SELECT {_COLUMNS} FROM feeds WHERE id = :id", {"id": feed_id})
        return _row(found) if found is not None else None

    def all(self, owner: str | None = None) -> list[FeedRow]:
        where = "WHERE owner = :o " if owner is not None else ""
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM feeds {where}ORDER BY created_at, id", {"o": owner}
            )
        return [_row(r) for r in rows]

    def due(self, now: float, limit: int = 100) -> list[FeedRow]:
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM feeds WHERE enabled = :t AND next_run_at <= :now "
                "ORDER BY next_run_at, id LIMIT :n",
                {"t": True, "now": now, "n": limit},
            )
        return [_row(r) for r in rows]

    def claim(self, feed_id: str, expected_next: float, next_run_at: float) -> bool:
        with self._db.write() as tx:
            changed = tx.execute(
                "UPDATE feeds SET next_run_at = :next WHERE id = :id AND next_run_at = :old",
                {"next": next_run_at, "id": feed_id, "old": expected_next},
            )
        return changed == 1

    def record(
        self, feed_id: str, at: float, status: str, result: Any, next_cursor: str | None
    ) -> None:
        with self._db.write() as tx:
            tx.execute(
                "UPDATE feeds SET last_run_at = :at, last_status = :status, "
                "last_result = :result, next_cursor = :cursor, runs = runs + 1 WHERE id = :id",
                {
                    "at": at,
                    "status": status,
                    "result": json_in(result),
                    "cursor": next_cursor,
                    "id": feed_id,
                },
            )

    def delete(self, feed_id: str) -> bool:
        with self._db.write() as tx:
            return tx.execute("DELETE FROM feeds WHERE id = :id", {"id": feed_id}) == 1

    def set_enabled(self, feed_id: str, enabled: bool) -> bool:
        with self._db.write() as tx:
            return (
                tx.execute(
                    "UPDATE feeds SET enabled = :e WHERE id = :id", {"e": enabled, "id": feed_id}
                )
                == 1
            )


def _row(found: tuple[Any, ...]) -> FeedRow:
    values = dict(zip(_NAMES, found, strict=True))
    values["roles"] = tuple(json_out(values["roles"]) or ())
    values["params"] = json_out(values["params"])
    values["last_result"] = json_out(values["last_result"])
    values["enabled"] = bool(values["enabled"])
    return FeedRow(**values)
