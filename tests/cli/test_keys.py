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


def test_create_and_revoke_speak_json(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    runner = CliRunner()
    made = runner.invoke(cli, ["--db", db, "keys", "create", "bob", "--role", "reader", "--json"])
    assert made.exit_code == 0, made.output
    body = json.loads(made.stdout)
    assert body["subject"] == "bob" and body["roles"] == ["reader"]
    with Store.open(db) as store:
        found = SqlKeyRepository(store).verify(body["key"])
    assert found is not None and found.key_id == body["id"]
    gone = runner.invoke(cli, ["--db", db, "keys", "revoke", body["id"], "--json"])
    assert gone.exit_code == 0 and json.loads(gone.stdout) == {"revoked": body["id"]}
    again = runner.invoke(cli, ["--db", db, "keys", "revoke", body["id"], "--json"])
    assert again.exit_code == 1
    assert json.loads(again.stdout)["error"]["code"] == "key_not_found"
    bad = runner.invoke(cli, ["--db", db, "keys", "create", "x" * 201, "--json"])
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_request"
