"""``plugyard policy|approvals|actions|audit|secrets|feeds`` on the embedded store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from plugyard.cli.main import cli

POLICY = """
subjects: {bob: {roles: [clerk]}, alice: {roles: [boss]}}
grants:
  - {to: "role:clerk", plugin: calculator, effect: allow_with_approval}
  - {to: "role:boss", plugin: "*", verb: approve, effect: allow}
  - {to: "role:boss", plugin: "*", effect: allow}
"""
ENV = {"PLUGYARD_AUDIT_KEY": "ab" * 32, "PLUGYARD_SECRETS_KEY": "cd" * 32}


def run(db: Path, *args: str, stdin: str | None = None) -> tuple[int, Any]:
    """Every governance command prints JSON with --json (the programs' form)."""
    result = CliRunner().invoke(cli, ["--db", str(db), *args, "--json"], input=stdin, env=ENV)
    try:
        return result.exit_code, json.loads(result.output)
    except ValueError:
        return result.exit_code, result.output


def test_policy_approval_and_audit_round_trip(tmp_path: Path) -> None:
    db, policy = tmp_path / "g.db", tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code, out = run(db, "policy", "load", str(policy), "--as", "alice")
    assert code == 0 and out["version"].startswith("p-")
    code, out = run(db, "policy", "check", "bob", "calculator", "execute")
    assert out["outcome"] == "allow_with_approval"
    args = ["actions", "perform", "calculator", "execute", "--input", '{"expression": "6*7"}']
    code, pending = run(db, *args, "--as", "bob")
    assert code == 0 and pending["status"] == "pending_approval"
    code, listed = run(db, "approvals", "list")
    assert [a["action_id"] for a in listed] == [pending["action_id"]]
    assert "receipt" not in json.dumps(listed)
    code, out = run(db, "approvals", "approve", pending["action_id"], "--as", "bob")
    assert code == 1 and out["error"]["code"] == "permission_denied"
    code, out = run(db, "approvals", "approve", pending["action_id"], "--as", "alice")
    assert code == 0 and out["state"] == "approved"
    code, done = run(db, *args, "--as", "bob", "--receipt", pending["receipt"])
    assert code == 0 and done["status"] == "ok" and done["result"]["result"] == 42
    code, again = run(db, *args, "--as", "bob", "--receipt", pending["receipt"])
    assert code == 1 and again["error"]["code"] == "receipt_used"
    code, check = run(db, "audit", "verify")
    assert code == 0 and check["ok"] and check["events"] >= 6
    code, tail = run(db, "audit", "tail", "-n", "3")
    assert [e["status"] for e in tail][-1] == "error"


def test_a_malformed_policy_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("grants: [{to: everyone}]")
    code, out = run(tmp_path / "g.db", "policy", "load", str(bad))
    assert code == 1 and out["error"]["code"] == "policy_invalid"
    code, out = run(tmp_path / "g.db", "policy", "show")
    assert out["state"] == "starter"


def test_secrets_are_set_listed_and_deleted_without_their_values(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    code, out = run(db, "secrets", "set", "api_token", "--stdin", stdin="s3cret-value\n")
    assert code == 0 and "s3cret" not in json.dumps(out)
    code, out = run(db, "secrets", "set", "api_token", "--user", "bob", stdin="bob-value-1\n")
    code, listed = run(db, "secrets", "list")
    assert [(s["scope"], s["owner"]) for s in listed] == [("system", None), ("user", "bob")]
    assert "value" not in json.dumps(listed)
    assert run(db, "secrets", "delete", "api_token")[0] == 0
    assert run(db, "secrets", "delete", "api_token")[0] == 1


def test_feeds_are_added_listed_and_run(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    code, out = run(
        db,
        "feeds",
        "add",
        "calculator",
        "--every",
        "60",
        "--as",
        "bob",
        "--role",
        "reader",  # the starter policy lets readers call read-only operations
        "--input",
        '{"expression": "1+1"}',
    )
    assert code == 0 and out["operation"] == "execute"
    code, ticks = run(db, "feeds", "run-due")
    assert [t["status"] for t in ticks] == ["success"]
    code, feeds = run(db, "feeds", "list")
    assert feeds[0]["runs"] == 1 and feeds[0]["last_status"] == "success"
    code, out = run(db, "feeds", "add", "calculator", "--as", "bob")
    assert code == 1 and out["error"]["code"] == "invalid_schedule"


def test_every_command_prints_text_for_people_and_json_with_the_flag(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    human = CliRunner().invoke(cli, ["--db", str(db), "policy", "show"], env=ENV)
    assert human.exit_code == 0 and "state: starter" in human.output
    code, out = run(db, "policy", "show")
    assert code == 0 and out["state"] == "starter"
    refused = CliRunner().invoke(
        cli, ["--db", str(db), "feeds", "add", "calculator", "--as", "bob", "--every", "60",
              "--json", '{"expression": "1+1"}'], env=ENV,
    )  # fmt: skip
    assert refused.exit_code == 2  # --json is an output flag everywhere: no value follows it
