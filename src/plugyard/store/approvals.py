"""Approval rows: a request waiting for a human, then decided, then used once.

Every state change is one conditional ``UPDATE`` (compare-and-set on ``state``), so of
any number of concurrent approvers or redeemers exactly one changes a row. The receipt
itself is never stored: only its SHA-256.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store

ApprovalState = Literal["pending", "approved", "rejected", "used"]


@dataclass(frozen=True, slots=True)
class ApprovalRow:
    id: str
    receipt_hash: str
    request_digest: str
    subject: str | None
    plugin_id: str
    operation: str
    preview: Any
    state: ApprovalState
    policy_version: str | None
    created_at: float
    expires_at: float
    decided_by: str | None = None
    decided_at: float | None = None
    note: str | None = None
    used_at: float | None = None


class ApprovalRepository(Protocol):
    def create(self, row: ApprovalRow) -> None: ...

    def get(self, approval_id: str) -> ApprovalRow | None: ...

    def by_receipt(self, receipt_hash: str) -> ApprovalRow | None: ...

    def list(self, state: str | None = None, limit: int = 100) -> list[ApprovalRow]:
        """Newest first."""
        ...

    def decide(
        self, approval_id: str, state: ApprovalState, by: str | None, at: float, note: str | None
    ) -> bool:
        """``pending`` → ``state`` if still pending and not expired; answers whether it
        changed the row."""
        ...

    def consume(self, receipt_hash: str, at: float) -> bool:
        """``approved`` → ``used`` if not expired; exactly one caller gets ``True``."""
        ...


_NAMES = [f.name for f in fields(ApprovalRow)]
_COLUMNS = ", ".join(_NAMES)
_SELECT = f"SELECT {_COLUMNS} FROM approvals"


class SqlApprovalRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def create(self, row: ApprovalRow) -> None:
        values = {name: getattr(row, name) for name in _NAMES}
        values["preview"] = json_in(row.preview)
        placeholders = ", ".join(f":{n}" for n in _NAMES)
        with self._db.write() as tx:
            tx.execute(f"INSERT INTO approvals ({_COLUMNS}) VALUES ({placeholders})", values)

    def get(self, approval_id: str) -> ApprovalRow | None:
        return self._one(f"{_SELECT} WHERE id = :v", approval_id)

    def by_receipt(self, receipt_hash: str) -> ApprovalRow | None:
        return self._one(f"{_SELECT} WHERE receipt_hash = :v", receipt_hash)

    def list(self, state: str | None = None, limit: int = 100) -> list[ApprovalRow]:
        where = "WHERE state = :state " if state is not None else ""
        with self._db.read() as tx:
            rows = tx.all(
                f"{_SELECT} {where}ORDER BY created_at DESC, id DESC LIMIT :n",
                {"state": state, "n": limit},
            )
        return [_row(r) for r in rows]

    def decide(
        self, approval_id: str, state: ApprovalState, by: str | None, at: float, note: str | None
    ) -> bool:
        with self._db.write() as tx:
            changed = tx.execute(
                "UPDATE approvals SET state = :state, decided_by = :by, decided_at = :at, "
                "note = :note WHERE id = :id AND state = 'pending' AND expires_at > :at",
                {"state": state, "by": by, "at": at, "note": note, "id": approval_id},
            )
        return changed == 1

    def consume(self, receipt_hash: str, at: float) -> bool:
        with self._db.write() as tx:
            changed = tx.execute(
                "UPDATE approvals SET state = 'used', used_at = :at WHERE receipt_hash = :h "
                "AND state = 'approved' AND expires_at > :at",
                {"at": at, "h": receipt_hash},
            )
        return changed == 1

    def _one(self, sql: str, value: str) -> ApprovalRow | None:
        with self._db.read() as tx:
            found = tx.one(sql, {"v": value})
        return _row(found) if found is not None else None


def _row(found: tuple[Any, ...]) -> ApprovalRow:
    values = dict(zip(_NAMES, found, strict=True))
    values["preview"] = json_out(values["preview"])
    return ApprovalRow(**values)
