"""Throwaway PostgreSQL databases for test suites (this one's and later ones').

A suite asks the server named by ``PLUGYARD_TEST_POSTGRES_URL`` for a database of its
own, ``plugyard_test_<random>``, and drops it when done, so parallel or interrupted
runs never share state. Whether an unreachable server fails or skips the tests is the
suite's choice (CI fails); this module only reports why it is unreachable.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from plugyard.store import urls

SERVER_URL_ENV = "PLUGYARD_TEST_POSTGRES_URL"
DEFAULT_SERVER_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def server_url(environ: Mapping[str, str] | None = None) -> URL:
    env = os.environ if environ is None else environ
    return urls.resolve(env.get(SERVER_URL_ENV) or DEFAULT_SERVER_URL)


def on_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this is a CI run, where an unreachable server is a failure, not a skip."""
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() in {"true", "1", "yes"}


def unreachable(url: URL) -> str | None:
    """Why the server cannot be used, or ``None`` when it answers."""
    engine = create_engine(url, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return f"PostgreSQL at {urls.display(url)} is unreachable: {cause}"
    finally:
        engine.dispose()
    return None


@contextmanager
def temporary_database(server: URL) -> Iterator[URL]:
    """Create an empty database on ``server``, yield its URL, drop it afterwards."""
    name = f"plugyard_test_{secrets.token_hex(6)}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield server.set(database=name)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def reset_database(url: URL) -> None:
    """Empty a test database: drop every table, type and revision mark in it."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
    finally:
        engine.dispose()
