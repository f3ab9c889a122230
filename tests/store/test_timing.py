"""The bench-only timing of store transactions (store/timing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.store import timing
from plugyard.store.rawdb import raw_db
from plugyard.store.store import Store


def test_transactions_are_timed_only_when_asked(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert timing.TOTALS is None  # off unless the environment names a file
    totals = timing.Totals(str(tmp_path / "timing-%p.json"))
    monkeypatch.setattr(timing, "TOTALS", totals)
    store.plugins.get("absent")
    with raw_db(store).read() as tx:
        tx.one("SELECT 1")
    assert totals.transactions == 2
    assert totals.held_s > 0 and totals.wait_s >= 0
