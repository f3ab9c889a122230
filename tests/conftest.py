"""No test reaches the real data folder: every test has a ``PLUGYARD_HOME`` of its own
(and an ``XDG_DATA_HOME``), and so has every process a test starts."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

_SESSION_HOME = Path(tempfile.mkdtemp(prefix="plugyard-test-home-"))


def pytest_configure(config: pytest.Config) -> None:
    # Before any fixture, session-wide ones included, opens a default store.
    os.environ["PLUGYARD_HOME"] = str(_SESSION_HOME / "plugyard")
    os.environ["XDG_DATA_HOME"] = str(_SESSION_HOME / "xdg")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("PLUGYARD_HOME", str(home / "plugyard"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg"))


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[URL]:
    """A database of the session's own on the PostgreSQL server of the store tests
    (``PLUGYARD_TEST_POSTGRES_URL``, loopback by default), dropped at the end; each user
    empties it first. An unreachable server fails the test on CI and skips it elsewhere."""
    from plugyard.store import testing

    server = testing.server_url()
    reason = testing.unreachable(server)
    if reason is not None:
        if testing.on_ci():
            pytest.fail(
                f"{reason}. CI runs the PostgreSQL suites: scripts/services.sh starts the "
                f"server, or set {testing.SERVER_URL_ENV}.",
                pytrace=False,
            )
        pytest.skip(reason)
    with testing.temporary_database(server) as database:
        yield database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL on each backend in turn: a SQLite file, then the emptied PostgreSQL
    database of the session (emptied again afterwards)."""
    from plugyard.store import testing

    if request.param == "sqlite":
        yield str(tmp_path / "yard.db")
        return
    database: URL = request.getfixturevalue("postgres_database")
    testing.reset_database(database)
    yield database.render_as_string(hide_password=False)
    testing.reset_database(database)


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    """One Ray instance on loopback for the session (starting one takes seconds): the
    Ray backend's ``ray:local`` uses it. Without Ray installed the tests skip, except on
    CI, which installs the ``ray`` extra (scripts/setup.sh) and fails instead."""
    from plugyard.store.testing import on_ci

    # Loopback only: without this Ray swaps 127.0.0.1 for the interface address (read
    # when ray is imported; its workers inherit it).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        if on_ci():
            pytest.fail("ray is not installed: scripts/setup.sh installs plugyard[ray]",
                        pytrace=False)  # fmt: skip
        pytest.skip("ray is not installed (pip install 'plugyard[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1")  # fmt: skip
    yield
    ray.shutdown()
