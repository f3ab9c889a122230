"""``plugyard keys``: create prints the key once, list never shows it, revoke ends it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli
from plugyard.store.keys import SqlKeyRepository
from plugyard.store.store import Store


def test_create_list_revoke(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    runner = CliRunner()
    made = runner.invoke(cli, ["--db", db, "keys", "create", "alice", "--role", "admin"])
    assert made.exit_code == 0, made.output
    key = made.stdout.strip().splitlines()[0]
    with Store.open(db) as store:
        found = SqlKeyRepository(store).verify(key)
    assert found is not None and found.admin and found.subject == "alice"
    listed = json.loads(runner.invoke(cli, ["--db", db, "keys", "list", "--json"]).stdout)
    assert [k["subject"] for k in listed] == ["alice"]
    assert key not in json.dumps(listed)
    assert runner.invoke(cli, ["--db", db, "keys", "revoke", listed[0]["id"]]).exit_code == 0
    assert runner.invoke(cli, ["--db", db, "keys", "revoke", listed[0]["id"]]).exit_code == 1
    with Store.open(db) as store:
        assert SqlKeyRepository(store).verify(key) is None
        assert SqlKeyRepository(store).bootstrap_admin() is None  # a store that had keys
