"""Every store test runs on SQLite and on PostgreSQL.

PostgreSQL is the server named by ``PLUGYARD_TEST_POSTGRES_URL`` (loopback by default);
the session gets a database of its own, emptied after each test and dropped at the end.
When the server is unreachable the PostgreSQL half fails on CI and is skipped elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from plugyard.store import testing
from plugyard.store.store import Store

BACKENDS = ["sqlite", "postgresql"]


def backend_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield str(tmp_path / "db" / "plugyard.db")
        return
    database: URL = request.getfixturevalue("postgres_database")
    testing.reset_database(database)
    yield database.render_as_string(hide_password=False)
    testing.reset_database(database)


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from backend_url(request, request.param, tmp_path)


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()
