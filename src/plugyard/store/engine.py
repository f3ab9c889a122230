"""Engines for the two supported backends, configured the way the store relies on.

SQLite: WAL, ``synchronous=NORMAL`` (WAL keeps every committed transaction across a
crash; only the last ones may be lost on power failure), foreign keys on, and a busy
timeout so a second writer waits instead of failing. The sqlite3 driver's own
transaction handling skips ``BEGIN`` before DDL and SELECT, which would make migrations
and read-then-write checks non-atomic, so SQLAlchemy emits ``BEGIN`` itself — as
``BEGIN IMMEDIATE`` for writes, which takes the write lock up front: a deferred
transaction that upgrades to a writer later can fail with "database is locked" no
matter how long the busy timeout is.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection
from sqlalchemy.pool import StaticPool

from plugyard.store.rawdb import json_document, prepare_sqlite

#: Execution option that marks a connection's transaction as a write.
WRITE_OPTION = "plugyard_write"


def make_engine(url: URL) -> Engine:
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    return create_engine(
        url,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 10},
    )


def _sqlite_engine(url: URL) -> Engine:
    memory = url.database in (None, "", ":memory:")
    engine = create_engine(
        url,
        # One in-memory database exists per connection: share a single one.
        poolclass=StaticPool if memory else None,
        connect_args={"check_same_thread": False},
        json_deserializer=json_document,
    )
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    prepare_sqlite(dbapi_connection)


def _on_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get(WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
