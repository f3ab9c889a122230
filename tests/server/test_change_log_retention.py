"""What ``plugyard serve`` keeps of the change log (docs/scaling.md, "Retention")."""

from __future__ import annotations

import pytest

from plugyard.server.app import ServerSettings
from plugyard.store.changes import KEEP_LAST, KEEP_S


def test_the_retention_comes_from_the_environment() -> None:
    assert ServerSettings.for_serving({}).change_log.keep_s == KEEP_S
    assert ServerSettings.for_serving({}).change_log.keep_last == KEEP_LAST
    env = {"PLUGYARD_CHANGE_LOG_KEEP_S": "600", "PLUGYARD_CHANGE_LOG_KEEP_LAST": "50"}
    retention = ServerSettings.for_serving(env).change_log
    assert (retention.keep_s, retention.keep_last) == (600.0, 50)


def test_a_retention_that_would_drop_the_newest_change_is_refused() -> None:
    with pytest.raises(ValueError, match="keep_last"):
        ServerSettings.for_serving({"PLUGYARD_CHANGE_LOG_KEEP_LAST": "0"})
