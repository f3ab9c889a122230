"""``plugyard validate``, ``plugyard export`` and ``plugyard schema``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli
from plugyard.manifest.model import descriptor_json_schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "plugins"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_validate_json_reports_every_bundled_plugin_ok() -> None:
    code, out = run("validate", "--json", str(EXAMPLES))
    rows = json.loads(out)
    assert code == 0
    assert rows and all(r["ok"] for r in rows)
    assert {"path", "dialect", "id", "family", "ok", "errors"} <= set(rows[0])


def test_validate_fails_with_pointer_for_a_bad_manifest(tmp_path: Path) -> None:
    bad = tmp_path / "plugin.yaml"
    bad.write_text("plugin:\n  name: no id\n  capability: MODEL\n")
    code, out = run("validate", "--json", str(tmp_path))
    rows = json.loads(out)
    assert code == 1
    assert rows[0]["ok"] is False
    assert rows[0]["dialect"] == "olo"
    assert rows[0]["errors"][0]["code"] == "manifest_missing_field"
    assert rows[0]["errors"][0]["pointer"] == "/plugin/id"


def test_validate_of_a_missing_path_fails(tmp_path: Path) -> None:
    code, out = run("validate", "--json", str(tmp_path / "nope.yaml"))
    assert code == 1
    assert json.loads(out)[0]["errors"][0]["code"] in {"manifest_not_found"}


def test_validate_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "plugin.yaml").write_text("plugin:\n  id: a\n")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    run("validate", str(tmp_path))
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_export_to_each_tool_format_is_json() -> None:
    for fmt in ("openai", "anthropic", "mcp"):
        code, out = run("export", str(EXAMPLES), "--to", fmt)
        assert code == 0
        assert isinstance(json.loads(out), list)


def test_export_to_a_dialect_reads_back(tmp_path: Path) -> None:
    for dialect, name in (("olo", "plugin.yaml"), ("mrp", "plugin.json"), ("shu", "manifest.py")):
        code, out = run("export", str(EXAMPLES / "tool" / "weather"), "--to", dialect)
        assert code == 0, out
        target = tmp_path / dialect / name
        target.parent.mkdir()
        target.write_text(out)
        code, out = run("validate", "--json", str(target))
        assert code == 0, out
        assert json.loads(out)[0]["id"] == "weather"


def test_committed_schema_is_current() -> None:
    committed = json.loads((ROOT / "schemas" / "plugin-descriptor.schema.json").read_text())
    assert committed == descriptor_json_schema(), (
        "run: plugyard schema > schemas/plugin-descriptor.schema.json"
    )
