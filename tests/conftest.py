"""No test reaches the real data folder: every test has a ``PLUGYARD_HOME`` of its own
(and an ``XDG_DATA_HOME``), and so has every process a test starts."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

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
