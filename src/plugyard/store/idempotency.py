"""Idempotency keys: claimed atomically before a call runs, completed with its result.

A claim is one ``INSERT … ON CONFLICT DO NOTHING``: of any number of processes racing
on one key exactly one inserts, and every other one reads the row that won. (Reading
first and inserting after — check-then-act — let 2.6 executions through per key under
16 processes; DESIGN.md §10.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

import msgspec

from plugyard.store.rawdb import Extra, RawDb, Tx, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store

#: ``claimed``: running, or died running; ``done``: the result is stored; ``unknown``:
#: the call ended without a known outcome (timeout, cancellation, crash).
KeyState = Literal["claimed", "done", "unknown"]


class IdempotencyRow(NamedTuple):
    """One row of ``idempotency_keys``. A named tuple: one is built per keyed call."""

    key: str
    request_digest: str
    subject: str | None
    plugin_id: str
    operation: str
    state: KeyState
    claimed_at: float
    result: Any = None
    request_id: str | None = None
    completed_at: float | None = None


class IdempotencyRepository(Protocol):
    def claim(self, row: IdempotencyRow) -> IdempotencyRow | None:
        """Insert ``row`` if its key is free and answer ``None``; otherwise answer the
        row that holds the key. Atomic across processes."""
        ...

    def complete(self, key: str, state: KeyState, result: Any, completed_at: float) -> None:
        """Record how the claimed call ended."""
        ...

    def completion(self, key: str, state: KeyState, result: Any, completed_at: float) -> Extra:
        """:meth:`complete` as a statement to run inside another write's transaction."""
        ...

    def take_over(self, key: str, stale_before: float, claimed_at: float) -> bool:
        """Re-claim a ``claimed`` key whose claim is older than ``stale_before``;
        answers whether this caller now holds it (one caller wins)."""
        ...

    def release(self, key: str) -> None:
        """Drop a claim whose call never reached the plugin, so a retry may run."""
        ...

    def get(self, key: str) -> IdempotencyRow | None: ...


_COLUMNS = (
    "key, request_digest, subject, plugin_id, operation, state, claimed_at, result, "
    "request_id, completed_at"
)
_INSERT = (
    f"INSERT INTO idempotency_keys ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL) "
    "ON CONFLICT (key) DO NOTHING"
)
_SELECT = f"SELECT {_COLUMNS} FROM idempotency_keys WHERE key = :key"
_COMPLETE = "UPDATE idempotency_keys SET state = ?, result = ?, completed_at = ? WHERE key = ?"


class SqlIdempotencyRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def claim(self, row: IdempotencyRow) -> IdempotencyRow | None:
        values = (*row[:7], row.request_id)
        if not self._db.postgres:
            # One autocommit statement is the whole claim (ON CONFLICT makes it atomic);
            # only a taken key needs a second look, and a claim released in between
            # (nothing ran) is simply claimed again.
            for _ in range(3):
                if self._db.execute_alone(_INSERT, values) == 1:
                    return None
                with self._db.read() as tx:
                    found = tx.one(_SELECT, {"key": row.key})
                if found is not None:
                    return _row(found)
        with self._db.write() as tx:
            if tx.execute_positional(_INSERT, values) == 1:
                return None
            found = tx.one(_SELECT, {"key": row.key})
        assert found is not None  # in one transaction the conflicting row is still there
        return _row(found)

    def complete(self, key: str, state: KeyState, result: Any, completed_at: float) -> None:
        self.completion(key, state, result, completed_at)(None)

    def completion(self, key: str, state: KeyState, result: Any, completed_at: float) -> Extra:
        values = (state, _result_json(result), completed_at, key)

        def run(tx: Tx | None) -> None:
            if tx is None:
                with self._db.write() as own:
                    own.execute_positional(_COMPLETE, values)
            else:
                tx.execute_positional(_COMPLETE, values)

        return run

    def take_over(self, key: str, stale_before: float, claimed_at: float) -> bool:
        with self._db.write() as tx:
            changed = tx.execute(
                "UPDATE idempotency_keys SET claimed_at = :now WHERE key = :key "
                "AND state = 'claimed' AND claimed_at < :stale",
                {"now": claimed_at, "key": key, "stale": stale_before},
            )
        return changed == 1

    def release(self, key: str) -> None:
        with self._db.write() as tx:
            tx.execute(
                "DELETE FROM idempotency_keys WHERE key = :key AND state = 'claimed'", {"key": key}
            )

    def get(self, key: str) -> IdempotencyRow | None:
        with self._db.read() as tx:
            found = tx.one(_SELECT, {"key": key})
        return _row(found) if found is not None else None


_encode = msgspec.json.Encoder().encode


def _result_json(result: Any) -> str | None:
    """A call's result as the JSON text to keep: msgspec's, as the service writes it to
    its clients (and ~10× faster than the standard module); the standard module's where
    msgspec refuses the value (lone surrogates, keys that are neither strings nor
    numbers) or where its text holds ``null``, which may stand for a NaN or an infinity
    that the standard module keeps as such."""
    if result is None:
        return None
    try:
        text = _encode(result)
    except (TypeError, ValueError, OverflowError):
        return json_in(result)
    return json_in(result) if b"null" in text else text.decode()


def _row(found: tuple[Any, ...]) -> IdempotencyRow:
    key, digest, subject, plugin_id, operation, state, claimed, result, rid, done = found
    return IdempotencyRow(
        key, digest, subject, plugin_id, operation, state, claimed, json_out(result), rid, done
    )
