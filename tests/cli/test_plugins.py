"""``plugyard plugins list|show`` and ``plugyard call`` on the embedded store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


def test_list_json_groups_by_capability_with_all_undefined_and_control(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "plugins", "list", "--json")
    assert code == 0
    view = json.loads(out)
    sections = {s["capability"]: [p["id"] for p in s["plugins"]] for s in view["sections"]}
    assert "observer-passthrough" in sections["CACHING"]
    assert "observer-passthrough" in sections["ACCESS"]
    assert sections["ACCESS"] == sorted(sections["ACCESS"])
    assert "calculator" in sections["Undefined"]
    roles = {c["role"]: [p["id"] for p in c["plugins"]] for c in view["control"]}
    assert roles["CONDITION"] == ["condition-expression"]
    assert roles["JOIN"] == ["join-merge"]


def test_list_filters_by_family_and_capability(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "plugins", "list", "--json", "--family", "kb")
    ids = [p["id"] for s in json.loads(out)["sections"] for p in s["plugins"]]
    assert code == 0
    assert ids == ["kb-embed", "kb-lexical"]
    code, out = run(tmp_path / "p.db", "plugins", "list", "--json", "--capability", "CACHING")
    view = json.loads(out)
    assert [s["capability"] for s in view["sections"]] == ["CACHING"] and view["control"] == []
    caching = [p["id"] for p in view["sections"][0]["plugins"]]
    assert "cache-memory" in caching and "calculator" not in caching


def test_list_refuses_an_unknown_capability_with_the_nearest(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "p.db"), "plugins", "list", "--capability", "CACHNG"]
    )
    assert result.exit_code == 2 and "invalid_request" in result.output
    assert "'CACHING'" in result.output


def test_show_prints_the_canonical_descriptor(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "plugins", "show", "unit-convert", "--json")
    shown = json.loads(out)
    assert code == 0
    assert shown["dialect"] == "homeclaw"
    assert shown["descriptor"]["id"] == "unit-convert"
    code, out = run(tmp_path / "p.db", "plugins", "show", "nope", "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "plugin_not_found"


def test_call_prints_the_envelope_itself(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "call", "calculator", "-p", "expression=6*7", "--json")
    envelope = json.loads(out)
    assert code == 0
    assert envelope["status"] == "success"
    assert envelope["data"]["result"] == 42


def test_call_with_a_json_body_and_typed_params(tmp_path: Path) -> None:
    body = json.dumps({"value": 1, "from_unit": "km"})
    code, out = run(tmp_path / "p.db", "call", "unit-convert", "convert", "--input", body,
                    "-p", "to_unit=m", "--json")  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["data"]["result"] == 1000


def test_call_errors_exit_1_with_their_code(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "call", "calculator", "-p", "expression=1/0", "--json")
    assert code == 1
    assert json.loads(out)["status"] == "error"
    code, out = run(tmp_path / "p.db", "call", "calculator", "--input", "[1]")
    assert code == 2  # a usage error, before anything runs


def test_call_prints_the_data_for_people_and_the_envelope_with_json(tmp_path: Path) -> None:
    code, out = run(tmp_path / "p.db", "call", "calculator", "-p", "expression=6*7")
    assert code == 0 and "result: 42" in out and "status" not in out
    code, out = run(tmp_path / "p.db", "call", "calculator", "-p", "expression=1/0")
    assert code == 1 and "invalid_parameters" in out


def test_show_refuses_a_tampered_stored_descriptor_with_its_code(tmp_path: Path) -> None:
    database = tmp_path / "p.db"
    assert run(database, "plugins", "list")[0] == 0
    with sqlite3.connect(database) as connection:
        (text,) = connection.execute(
            "SELECT descriptor FROM plugins WHERE id = 'calculator'"
        ).fetchone()
        bad = {**json.loads(text), "timeout_ms": -1}  # the stamp still says "validated"
        connection.execute(
            "UPDATE plugins SET descriptor = ? WHERE id = 'calculator'", (json.dumps(bad),)
        )
    code, out = run(database, "plugins", "show", "calculator", "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "manifest_invalid_value"
