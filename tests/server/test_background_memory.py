"""A serving replica follows what the others learn (server/background.py): a request
remembered through one yard joins the memory of another yard on the same store once
its change watcher has applied the change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.discovery.remembered import TOPIC
from plugyard.server.background import REMEMBERED, follow_changes
from plugyard.store.changes import SqlChangeLog
from plugyard.yard import Settings, Yard

READER = ("reader",)


@pytest.fixture
def two_yards(tmp_path: Path) -> Iterator[tuple[Yard, Yard]]:
    settings = Settings(
        database=str(tmp_path / "shared.db"), embedder="hashing", discovery_learning_quorum=1
    )
    with Yard.from_settings(settings) as a, Yard.from_settings(settings) as b:
        yield a, b


def test_the_followed_topic_is_the_one_learned_requests_are_logged_under() -> None:
    assert REMEMBERED == TOPIC


def test_a_request_learned_through_one_yard_reaches_the_other(two_yards: tuple[Yard, Yard]) -> None:
    a, b = two_yards
    b.discovery.start()
    held = b.discovery.remembered_count("calculator")
    watcher = follow_changes(b, forget_keys=lambda: None)
    watcher.start()
    try:
        found = a.search("work out six times seven", subject="ana")
        assert a.feedback(found.search_id, "calculator", subject="ana", roles=READER).recorded
        assert watcher.wait_for(SqlChangeLog(a.store).latest(), timeout=10)
        assert b.discovery.remembered_count("calculator") == held + 1
        # Taken back on the first yard: gone from the second.
        again = a.search("work out six times seven", subject="ana")
        undone = a.feedback(
            again.search_id, "calculator", helpful=False, subject="ana", roles=READER
        )
        assert undone.reason == "removed"
        assert watcher.wait_for(SqlChangeLog(a.store).latest(), timeout=10)
        assert b.discovery.remembered_count("calculator") == held
    finally:
        watcher.stop()
