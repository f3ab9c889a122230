"""The audit log's rows: appended one at a time under the log's write lock.

The store only keeps the order: :meth:`AuditRepository.append` hands the caller the next
sequence number and the previous row's hash *inside* the write lock, so the caller's
chain link (computed in ``execution.audit_chain``) can never fork, whichever process
writes. Rows are never updated or deleted by plugyard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from plugyard.store.rawdb import Extra, RawDb, Tx, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store

#: The ``prev_hash`` of the first event.
GENESIS = "0" * 64
#: Serialises appends on PostgreSQL (an arbitrary, fixed advisory-lock key).
_CHAIN_LOCK = 0x617564697463


class AuditRecord(NamedTuple):
    """One row of ``audit_events``, in column order; ``hash`` covers every other column.
    A named tuple: it is built on every governed call and bound to the INSERT as is."""

    seq: int
    kind: str
    recorded_at: str
    started_at: str | None
    request_id: str | None
    subject: str | None
    plugin_id: str | None
    operation: str | None
    params_hash: str | None
    decision: str | None
    approver: str | None
    policy_version: str | None
    status: str
    error_code: str | None
    duration_ms: float | None
    detail: Any
    prev_hash: str
    hash: str

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


#: ``build(seq, prev_hash)`` → the record to store at ``seq``.
Build = Callable[[int, str], AuditRecord]


class AuditRepository(Protocol):
    def append(self, build: Build, extra: Extra | None = None) -> AuditRecord:
        """Store ``build(next_seq, prev_hash)``; ``extra`` runs in the same transaction."""
        ...

    def append_many(self, items: list[tuple[Build, Extra | None]]) -> list[AuditRecord]:
        """Store several in order in one transaction (a group commit): all or none."""
        ...

    def scan(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """Records with ``seq > after`` in order, at most ``limit``."""
        ...

    def tail(self, count: int) -> list[AuditRecord]:
        """The newest ``count`` records, oldest first."""
        ...


NAMES: tuple[str, ...] = AuditRecord._fields
_DETAIL = NAMES.index("detail")
_COLUMNS = ", ".join(NAMES)
_INSERT = f"INSERT INTO audit_events ({_COLUMNS}) VALUES ({', '.join('?' * len(NAMES))})"
_LAST = "SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1"


class SqlAuditRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)
        # The newest (seq, hash) this process wrote or read. Events are inserted on this
        # view without reading the head; the primary key on ``seq`` refuses them if
        # another writer got there first. A lone event with nothing to commit beside it
        # (one autocommit statement) then goes the careful way, with the head read inside
        # a write transaction; events in a transaction of their own read it there.
        self._head: tuple[int, str] | None = None

    def append(self, build: Build, extra: Extra | None = None) -> AuditRecord:
        return self.append_many([(build, extra)])[0]

    def append_many(self, items: list[tuple[Build, Extra | None]]) -> list[AuditRecord]:
        if not items:
            return []
        head = self._head
        if head is not None and not self._db.postgres:
            fast = self._append_on(head, items)
            if fast is not None:
                return fast
        with self._db.write(lock_key=_CHAIN_LOCK) as tx:
            records = _chain(_head_in(tx), items)
            tx.execute_many(_INSERT, [_row(r) for r in records])
            for _, extra in items:
                if extra is not None:
                    extra(tx)
        self._head = (records[-1].seq, records[-1].hash)
        return records

    def _append_on(
        self, head: tuple[int, str], items: list[tuple[Build, Extra | None]]
    ) -> list[AuditRecord] | None:
        """The records chained onto this process's view of the head, without reading it
        (SQLite); ``None`` when a lone event found the head moved (nothing was written)."""
        records = _chain(head, items)
        extras = [extra for _, extra in items if extra is not None]
        if len(records) == 1 and not extras:
            if not self._db.insert_alone(_INSERT, _row(records[0])):
                return None
        else:

            def again(tx: Tx) -> list[tuple[Any, ...]]:
                # Another writer took the first row's seq. The write lock is held now: the
                # head read here stays the head until this transaction commits.
                records[:] = _chain(_head_in(tx), items)
                return [_row(r) for r in records]

            self._db.insert_with(_INSERT, [_row(r) for r in records], extras, again)
        self._head = (records[-1].seq, records[-1].hash)
        return records

    def scan(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM audit_events WHERE seq > :after ORDER BY seq LIMIT :n",
                {"after": after, "n": limit},
            )
        return [_record(r) for r in rows]

    def tail(self, count: int) -> list[AuditRecord]:
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM audit_events ORDER BY seq DESC LIMIT :n", {"n": count}
            )
        return [_record(r) for r in reversed(rows)]


def _head_in(tx: Tx) -> tuple[int, str]:
    """The chain's head as ``tx`` reads it: (seq, hash) of the newest event, or the
    genesis before the first."""
    last = tx.one(_LAST)
    return (int(last[0]), str(last[1])) if last else (0, GENESIS)


def _chain(head: tuple[int, str], items: list[tuple[Build, Extra | None]]) -> list[AuditRecord]:
    seq, prev = head
    records: list[AuditRecord] = []
    for build, _ in items:
        seq += 1
        record = build(seq, prev)
        prev = record.hash
        records.append(record)
    return records


def _row(record: AuditRecord) -> tuple[Any, ...]:
    if record.detail is None:
        return record
    return record._replace(detail=json_in(record.detail))


def _record(row: tuple[Any, ...]) -> AuditRecord:
    values = list(row)
    values[_DETAIL] = json_out(values[_DETAIL])
    return AuditRecord(*values)
