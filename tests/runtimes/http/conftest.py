"""Fixtures: the external plugin server (one per module) and offline name resolution."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..offline import offline_resolution  # noqa: F401 - autouse fixture
from .servers import Canary, PluginServer


@pytest.fixture(scope="module")
def plugin_server() -> Iterator[PluginServer]:
    server = PluginServer().start()
    yield server
    server.stop()


@pytest.fixture
def canary() -> Iterator[Canary]:
    found = Canary()
    yield found
    found.close()
