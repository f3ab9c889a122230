"""``plugyard validate``, ``plugyard export`` and ``plugyard schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from plugyard.builtins import BUILTINS_DIR
from plugyard.cli.main import cli
from plugyard.manifest.exporters.functions import export_tools
from plugyard.manifest.model import descriptor_json_schema
from plugyard.yard import Settings, Yard

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "plugins"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def run_apart(*args: str, env: dict[str, str] | None = None) -> Result:
    """The result, with standard output and standard error kept apart."""
    return CliRunner().invoke(cli, list(args), env={"PLUGYARD_PLUGIN_DIRS": "", **(env or {})})


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
        result = run_apart("export", str(EXAMPLES), "--to", fmt)
        assert result.exit_code == 0
        assert isinstance(json.loads(result.stdout), list)


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


def tools_by_name(text: str) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in json.loads(text)}


def test_export_of_the_bundled_folder_describes_plugins_as_the_registry_does() -> None:
    result = run_apart("export", str(BUILTINS_DIR), "--to", "openai")
    assert result.exit_code == 0, result.stderr
    exported = tools_by_name(result.stdout)
    with Yard.from_settings(Settings(database=":memory:", governed=False)) as yard:
        registered = [p.descriptor for p in yard.registry.list() if p.source == "builtin"]
    assert exported == tools_by_name(json.dumps(export_tools(registered, "openai")))
    assert exported["calculator"]["parameters"]["required"] == ["expression"]


def test_export_strict_marks_every_tool_and_says_why_some_are_not_strict() -> None:
    result = run_apart("export", str(EXAMPLES), "--to", "openai", "--strict")
    assert result.exit_code == 0
    tools = tools_by_name(result.stdout)
    strict = [name for name, tool in tools.items() if tool["strict"]]
    assert f"{len(strict)} of {len(tools)} tool(s) strict" in result.stderr
    assert (
        "warn  export_unsupported kb-keyword__on_session_event at /properties/repositoryMeta: "
        "an object with free keys (a map) has no strict form; exported with strict: false"
    ) in result.stderr


def test_strict_applies_to_the_tool_formats_only() -> None:
    result = run_apart("export", str(EXAMPLES), "--to", "olo", "--strict")
    assert result.exit_code == 2
    assert "--strict applies to the tool formats" in result.output


def test_export_installed_gives_what_the_store_registered(tmp_path: Path) -> None:
    db = str(tmp_path / "p.db")
    result = run_apart("--db", db, "export", "--installed", "--to", "openai", "--strict")
    assert result.exit_code == 0, result.output
    tools = tools_by_name(result.stdout)
    assert "expression" in tools["calculator"]["parameters"]["properties"]
    assert {"unit-convert__convert", "time-zones__now"} <= set(tools)


def test_export_takes_a_path_or_installed(tmp_path: Path) -> None:
    for args in (
        ("export", "--to", "mcp"),
        ("export", str(EXAMPLES), "--installed", "--to", "mcp"),
    ):
        result = run_apart(*args)
        assert result.exit_code == 2
        assert "give a PATH or --installed" in result.output


def shu_folder(root: Path) -> Path:
    """A Shu plugin whose parameters only its class gives; importing it leaves a mark."""
    folder = root / "greet"
    folder.mkdir()
    (folder / "manifest.yaml").write_text(
        "name: greet\ndescription: Greets someone.\nentrypoints:\n  greet: greeting:Plugin\n"
    )
    (folder / "greeting.py").write_text(
        "from pathlib import Path\n"
        "(Path(__file__).parent / 'imported').write_text('yes')\n"
        "class Plugin:\n"
        "    def get_schema(self):\n"
        "        return {'type': 'object', 'properties': {'who': {'type': 'string'}},"
        " 'required': ['who']}\n"
        "    def execute(self, params, context=None, host=None):\n"
        "        return {'status': 'success', 'data': 'hello ' + params['who']}\n"
    )
    return folder


def test_the_code_of_a_folder_nobody_trusted_is_not_imported(tmp_path: Path) -> None:
    folder = shu_folder(tmp_path)
    result = run_apart("export", str(folder), "--to", "openai")
    assert result.exit_code == 0
    assert tools_by_name(result.stdout)["greet"]["parameters"]["properties"] == {}
    assert not (folder / "imported").exists()
    assert "warn  parameters_from_code greet: its parameters come from its code" in result.stderr
    assert "--load-code" in result.stderr


def test_load_code_describes_the_plugin_from_its_class_and_writes_no_bytecode(
    tmp_path: Path,
) -> None:
    folder = shu_folder(tmp_path)
    result = run_apart("export", str(folder), "--to", "openai", "--load-code")
    assert result.exit_code == 0, result.output
    assert tools_by_name(result.stdout)["greet"]["parameters"]["required"] == ["who"]
    assert not (folder / "__pycache__").exists()
    assert "parameters_from_code" not in result.stderr


def test_a_folder_in_the_plugin_dirs_is_trusted_as_the_registry_trusts_it(tmp_path: Path) -> None:
    folder = shu_folder(tmp_path)
    result = run_apart(
        "export", str(folder), "--to", "openai", env={"PLUGYARD_PLUGIN_DIRS": str(tmp_path)}
    )
    assert tools_by_name(result.stdout)["greet"]["parameters"]["required"] == ["who"]


def test_validate_warns_that_a_shu_plugins_parameters_come_from_its_code(tmp_path: Path) -> None:
    folder = shu_folder(tmp_path)
    code, out = run("validate", "--json", str(folder))
    assert code == 0
    [row] = json.loads(out)
    assert [w["code"] for w in row["warnings"]] == ["parameters_from_code"]
    assert not (folder / "imported").exists()
