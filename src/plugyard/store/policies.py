"""Policy documents as loaded, newest last: the newest is in force on every replica."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class PolicyRow:
    seq: int
    version: str
    document: Any
    source: str | None
    loaded_by: str | None
    loaded_at: float


class PolicyRepository(Protocol):
    def add(
        self, version: str, document: Any, source: str | None, by: str | None, at: float
    ) -> PolicyRow: ...

    def latest(self) -> PolicyRow | None: ...

    def latest_seq(self) -> int:
        """The sequence number of the document in force (0: none); a cheap poll."""
        ...


_COLUMNS = "seq, version, document, source, loaded_by, loaded_at"


class SqlPolicyRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def add(
        self, version: str, document: Any, source: str | None, by: str | None, at: float
    ) -> PolicyRow:
        with self._db.write() as tx:
            tx.execute(
                "INSERT INTO policies (version, document, source, loaded_by, loaded_at) "
                "VALUES (:v, :d, :s, :b, :at)",
                {"v": version, "d": json_in(document), "s": source, "b": by, "at": at},
            )
            found = tx.one(f"SELECT {_COLUMNS} FROM policies ORDER BY seq DESC LIMIT 1")
        assert found is not None
        return _row(found)

    def latest(self) -> PolicyRow | None:
        with self._db.read() as tx:
            found = tx.one(f"SELECT {_COLUMNS} FROM policies ORDER BY seq DESC LIMIT 1")
        return _row(found) if found is not None else None

    def latest_seq(self) -> int:
        with self._db.read() as tx:
            found = tx.one("SELECT MAX(seq) FROM policies")
        return int(found[0]) if found is not None and found[0] is not None else 0


def _row(found: tuple[Any, ...]) -> PolicyRow:
    seq, version, document, source, by, at = found
    return PolicyRow(int(seq), version, json_out(document), source, by, at)
