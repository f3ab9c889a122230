"""``plugyard mcp pins|approve``: the pins of MCP tools from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli
from runtimes.mcp.conftest import stdio_manifest

ENV = {"PLUGYARD_AUDIT_KEY": "ab" * 32, "PLUGYARD_SECRETS_KEY": "cd" * 32,
       "PLUGYARD_BUILTINS": "0"}  # fmt: skip


def test_pins_list_and_a_changed_tool_is_re_approved(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    stdio_manifest(tmp_path / "plugins" / "tools", state)
    env = {**ENV, "PLUGYARD_PLUGIN_DIRS": str(tmp_path / "plugins")}
    db = str(tmp_path / "yard.db")
    runner = CliRunner()
    first = runner.invoke(cli, ["--db", db, "mcp", "pins", "mcp-tools", "--json"], env=env)
    assert first.exit_code == 0, first.output
    pins = {p["tool"]: p for p in json.loads(first.output)}
    assert not pins["echo"]["changed"]
    (state / "variant").write_text("v2")
    changed = runner.invoke(cli, ["--db", db, "mcp", "pins", "--json"], env=env)
    pins = {p["tool"]: p for p in json.loads(changed.output)}
    assert pins["echo"]["changed"] and not pins["add"]["changed"]
    approve = ["mcp", "approve", "mcp-tools", "echo", "--by", "ops", "--json"]
    done = runner.invoke(cli, ["--db", db, *approve], env=env)
    assert done.exit_code == 0, done.output
    approved = json.loads(done.output)
    assert not approved["changed"] and approved["approved_by"] == "ops"
    unknown = runner.invoke(cli, ["--db", db, "mcp", "approve", "mcp-tools", "nope"], env=env)
    assert unknown.exit_code != 0
