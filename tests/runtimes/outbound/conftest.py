"""Fixtures shared with the http runtime's tests."""

from __future__ import annotations

from ..http.conftest import canary, plugin_server  # noqa: F401 - fixtures
from ..offline import offline_resolution  # noqa: F401 - autouse fixture
