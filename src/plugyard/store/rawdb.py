"""The store's statements, on one DBAPI connection it holds.

The governed call path writes twice per call (an idempotency claim, an audit event).
Through SQLAlchemy a write transaction costs ~90–130 µs on SQLite (checking a
connection out of the pool, events, compilation); on the driver's own connection it
costs ~10 µs. So every repository of the store speaks plain SQL to one connection the
store holds (one idiom, whether its path is hot or not); the tables themselves are
still described in ``schema.py`` and created by the migrations.

SQL is written with ``:name`` parameters (sqlite3's named style) and rewritten to
``%(name)s`` for psycopg. A write on SQLite begins with ``BEGIN IMMEDIATE`` (the
database's write lock, taken up front); on PostgreSQL a write may take a transaction-
scoped advisory lock to serialise one stream of writes (the audit chain). Where a
read decides a write, the read takes the row (``FOR UPDATE``, PostgreSQL only: SQLite's
write lock is already held) or the write is one conditional statement.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from plugyard.errors import StoreError
from plugyard.store import timing

if TYPE_CHECKING:
    from plugyard.store.store import Store

BUSY_TIMEOUT_MS = 10_000
# busy_timeout first: switching a new file to WAL needs a lock that another opener may
# hold for a moment, and without the timeout that is "database is locked" at once.
_PRAGMAS = (
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
)
_NAMED = re.compile(r"(?<![:\w]):(\w+)")
_MAKING = threading.Lock()
#: Where a store keeps its RawDb. On the store itself, not in a module-level map keyed
#: by the store: the RawDb holds its store, so such a map's entry kept every store that
#: was never closed alive; a store and its RawDb are one cycle the collector frees.
_SLOT = "_raw_db"


def raw_db(store: Store) -> RawDb:
    """The one :class:`RawDb` of ``store`` (made on first use)."""
    found: RawDb | None = store.__dict__.get(_SLOT)
    if found is not None:
        return found
    with _MAKING:
        found = store.__dict__.get(_SLOT)
        if found is None:
            found = store.__dict__[_SLOT] = RawDb(store)
        return found


def close_raw_db(store: Store) -> None:
    """Close ``store``'s :class:`RawDb`, if it made one (and its held connection)."""
    with _MAKING:
        found: RawDb | None = store.__dict__.pop(_SLOT, None)
    if found is not None:
        found.close()


def prepare_sqlite(connection: sqlite3.Connection) -> None:
    """A new SQLite connection as the store uses it (store/engine.py says why)."""
    # Take transaction control away from the driver: BEGIN is emitted explicitly.
    connection.isolation_level = None
    cursor = connection.cursor()
    try:
        for pragma in _PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()


def connect_sqlite(file: str) -> sqlite3.Connection:
    """A connection to the SQLite file ``file``, as the store's engine would make it."""
    connection = sqlite3.connect(file, check_same_thread=False)
    try:
        prepare_sqlite(connection)
    except BaseException:
        connection.close()
        raise
    return connection


def json_in(value: Any) -> str | None:
    """A value for a JSON column (text on SQLite, cast by PostgreSQL)."""
    return None if value is None else json.dumps(value, separators=(",", ":"))


def json_out(value: Any) -> Any:
    """A JSON column's value: psycopg decodes JSONB itself, sqlite3 hands back text."""
    return json.loads(value) if isinstance(value, str | bytes) else value


#: How SQLAlchemy writes a ``DateTime`` on SQLite (text, naive, to the microsecond): the
#: same text, so rows written through either path read and sort alike.
_SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"


def time_in(value: datetime | None, postgres: bool) -> Any:
    """A value for a ``UtcDateTime`` column: psycopg takes the aware datetime, SQLite
    the UTC text."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime: the store keeps UTC timestamps only")
    utc = value.astimezone(UTC)
    return utc if postgres else utc.strftime(_SQLITE_TIME)


def time_out(value: Any) -> datetime:
    """A ``UtcDateTime`` column's value, aware and in UTC (SQLite hands back the text it
    was written as UTC); a nullable column's ``None`` is the caller's to keep."""
    found = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(found, datetime)
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def matching(**given: Any) -> tuple[str, dict[str, Any]]:
    """A ``WHERE`` clause (with its leading space, or nothing) holding each column given a
    value to equal, and its parameters: a filter left ``None`` matches any row."""
    named = {column: value for column, value in given.items() if value is not None}
    if not named:
        return "", {}
    return " WHERE " + " AND ".join(f"{c} = :{c}" for c in named), named


def json_document(value: Any) -> Any:
    """:func:`json_out` for large documents (a plugin's descriptor): msgspec reads JSON a
    few times faster; what it refuses (NaN, lone surrogates) the standard module reads."""
    if not isinstance(value, str | bytes):
        return value
    try:
        return msgspec.json.decode(value)
    except msgspec.MsgspecError:
        return json.loads(value)


class Tx:
    """The statements of one transaction."""

    __slots__ = ("_cursor", "_postgres", "_renew")

    def __init__(self, cursor: Any, postgres: bool, renew: Callable[[], Any] | None) -> None:
        self._cursor = cursor
        self._postgres = postgres
        #: Until the first statement has run: a cursor on a new connection if the held
        #: one turns out lost (``None``: it was not), so that statement runs again there.
        self._renew = renew

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run one statement; answers the number of rows it changed."""
        self._run("execute", _sql(sql, self._postgres), params or {})
        return int(self._cursor.rowcount)

    def execute_positional(self, sql: str, values: tuple[Any, ...]) -> int:
        """Run one statement with ``?`` placeholders (cheaper to bind than names)."""
        if self._postgres:
            sql = _positional(sql)
        self._run("execute", sql, values)
        return int(self._cursor.rowcount)

    def execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """One statement over many rows with ``?`` placeholders: one trip into the driver
        for a whole group commit instead of one per row."""
        if self._postgres:
            sql = _positional(sql)
        self._run("executemany", sql, rows)

    def one(self, sql: str, params: Mapping[str, Any] | None = None) -> tuple[Any, ...] | None:
        self._run("execute", _sql(sql, self._postgres), params or {})
        row = self._cursor.fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        self._run("execute", _sql(sql, self._postgres), params or {})
        return [tuple(r) for r in self._cursor.fetchall()]

    def _run(self, method: str, sql: str, params: Any) -> None:
        renew = self._renew
        if renew is None:
            getattr(self._cursor, method)(sql, params)
            return
        self._renew = None
        try:
            getattr(self._cursor, method)(sql, params)
        except Exception:
            # Nothing of this transaction ran (or it was never committed): running its
            # first statement again on a new connection is what a pool's pre-ping buys,
            # without a round trip on every transaction.
            cursor = renew()
            if cursor is None:
                raise
            self._cursor = cursor
            getattr(cursor, method)(sql, params)


_CACHE: dict[tuple[str, bool], str] = {}
_CHECKPOINT_PAGES = 10_000


def _sql(sql: str, postgres: bool) -> str:
    key = (sql, postgres)
    found = _CACHE.get(key)
    if found is None:
        found = _NAMED.sub(r"%(\1)s", sql.replace("%", "%%")) if postgres else sql
        _CACHE[key] = found
    return found


_POSITIONAL: dict[str, str] = {}


def _positional(sql: str) -> str:
    found = _POSITIONAL.get(sql)
    if found is None:
        found = _POSITIONAL[sql] = sql.replace("%", "%%").replace("?", "%s")
    return found


#: A statement that rides along in another repository's transaction (``None``: there is
#: no shared transaction, so it runs on its own). Used to complete an idempotency key
#: in the audit event's transaction: one commit instead of two on the call path.
Extra = Callable[["Tx | None"], None]


class RawDb:
    """One DBAPI connection of a store, used by one thread at a time."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.postgres = store.backend == "postgresql"
        self._lock = threading.RLock()
        self._fairy: Any = None
        self._connection: Any = None

    def write(self, lock_key: int | None = None) -> AbstractContextManager[Tx]:
        """One write transaction; ``lock_key`` serialises it with others that name the
        same key (PostgreSQL; SQLite's write lock already serialises every write)."""
        if self.postgres:
            begin = "" if lock_key is None else f"SELECT pg_advisory_xact_lock({int(lock_key)})"
        else:
            begin = "BEGIN IMMEDIATE"
        return self._transaction("write", begin)

    def insert_alone(self, sql: str, values: tuple[Any, ...]) -> bool:
        """One ``INSERT`` as its own transaction (SQLite autocommit: one statement, no
        BEGIN/COMMIT round trips). ``False`` when a constraint refused the row — the caller
        built it on a stale view and must retry under a transaction. SQLite only."""
        try:
            self.execute_alone(sql, values)
        except sqlite3.IntegrityError:
            return False
        return True

    def execute_alone(self, sql: str, values: tuple[Any, ...]) -> int:
        """One statement as its own transaction (SQLite only); the rows it changed.
        Constraint violations reach the caller as ``sqlite3.IntegrityError``."""
        assert not self.postgres
        with self._lock:
            connection = self._connect()
            try:
                return int(connection.execute(sql, values).rowcount)
            except sqlite3.IntegrityError:
                raise
            except Exception as exc:
                if not _is_db_error(exc):
                    raise
                raise self._failure("write", exc) from None

    def insert_with(
        self,
        sql: str,
        rows: list[tuple[Any, ...]],
        extras: list[Extra],
        again: Callable[[Tx], list[tuple[Any, ...]]],
    ) -> None:
        """``rows`` inserted by ``sql`` and each of ``extras`` run, in one write transaction
        (SQLite only). When a constraint refuses the rows — the caller built them on a
        stale view — ``again`` builds them anew inside the transaction (the write lock
        is held: what it reads stays so until the commit), and they are inserted once
        more.

        :meth:`write` made lean for the governed call path: the statements go straight to
        the held connection, without the generator context manager, the named-parameter
        rewriting and the reconnect wrapper (5–7 µs a transaction, measured on an empty one)."""
        assert not self.postgres
        totals = timing.TOTALS
        asked = time.perf_counter() if totals is not None else 0.0
        with self._lock:
            got = time.perf_counter() if totals is not None else 0.0
            connection = self._connect()
            cursor = connection.cursor()
            try:
                cursor.execute("BEGIN IMMEDIATE")
                tx = Tx(cursor, False, None)
                try:
                    _insert(cursor, sql, rows)
                except sqlite3.IntegrityError:
                    _insert(cursor, sql, again(tx))
                for extra in extras:
                    extra(tx)
                cursor.execute("COMMIT")
            except BaseException as exc:
                self._rollback(connection)
                if isinstance(exc, StoreError) or not _is_db_error(exc):
                    raise
                raise self._failure("write", exc) from None
            finally:
                cursor.close()
                if totals is not None:
                    totals.add(got - asked, time.perf_counter() - got)

    def read(self) -> AbstractContextManager[Tx]:
        return self._transaction("read", "" if self.postgres else "BEGIN")

    @contextmanager
    def _transaction(self, what: str, begin: str) -> Iterator[Tx]:
        """One transaction on the held connection, opened by ``begin`` (psycopg opens its
        own); committed at the end, rolled back on any failure, which becomes a
        ``StoreError`` when the database raised it."""
        totals = timing.TOTALS
        asked = time.perf_counter() if totals is not None else 0.0
        with self._lock:
            got = time.perf_counter() if totals is not None else 0.0
            connection = self._connect()
            tx = Tx(connection.cursor(), self.postgres, self._renew if self.postgres else None)
            try:
                if begin:
                    tx.execute(begin)
                yield tx
                # The first statement may have moved the transaction to a new connection.
                connection = self._connection
                connection.commit() if self.postgres else tx._cursor.execute("COMMIT")
            except BaseException as exc:
                if self._connection is not None:
                    self._rollback(self._connection)
                if isinstance(exc, StoreError) or not _is_db_error(exc):
                    raise
                raise self._failure(what, exc) from None
            finally:
                tx._cursor.close()
                if totals is not None:
                    totals.add(got - asked, time.perf_counter() - got)

    def close(self) -> None:
        with self._lock:
            if self._fairy is not None:
                # Closing a broken connection: there is nothing left to save.
                with contextlib.suppress(Exception):
                    self._fairy.close()
            self._fairy = self._connection = None

    # ------------------------------------------------------------------------- helpers

    def _connect(self) -> Any:
        if self._connection is None:
            file = self._store.sqlite_file
            try:
                if file is not None:  # without the engine: a start may not need it at all
                    self._fairy = self._connection = connect_sqlite(file)
                else:
                    self._fairy = self._store.engine.raw_connection()
                    self._connection = self._fairy.driver_connection
            except Exception as exc:
                raise self._failure("connect", exc) from None
            if not self.postgres:
                # A checkpoint fsyncs; at the default 1,000 pages one came every few hundred
                # governed calls and cost 30–50 % of the claim's time. Committed writes are
                # as durable either way (WAL); the WAL may grow to ~40 MB between them.
                # (A checkpointing thread was tried and dropped: a process that forks —
                # multiprocessing, a pre-forking server — could copy SQLite's locks held.)
                self._connection.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
        return self._connection

    def _renew(self) -> Any:
        """A cursor on a new connection when the held one was lost (the server restarted,
        or ended it); ``None`` when it was not lost."""
        if self._connection is None or not self._connection.closed:
            return None
        # Invalidated, not closed: the pool would try to reset the dead connection.
        with contextlib.suppress(Exception):
            self._fairy.invalidate()
        self._fairy = self._connection = None
        return self._connect().cursor()

    def _rollback(self, connection: Any) -> None:
        try:
            if self.postgres:
                connection.rollback()
            elif connection.in_transaction:
                connection.execute("ROLLBACK")
        except Exception:
            self.close()  # a connection that cannot roll back is not reused

    def _failure(self, what: str, exc: BaseException) -> StoreError:
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if self.postgres:
            self.close()  # psycopg may leave the connection unusable; start afresh
        return StoreError(f"store {what} failed on {self._store.url}: {cause}")


def _insert(cursor: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
    if len(rows) == 1:
        cursor.execute(sql, rows[0])
    else:
        cursor.executemany(sql, rows)


def _is_db_error(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("sqlite3", "psycopg"))
