"""``plugyard pipeline validate|run|diagram`` and ``plugyard palette``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pipelines"
CALCULATOR = str(EXAMPLES / "guarded-calculator.yaml")


def run(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return str(path)


BAD = """
capabilities:
  - capability: MODEL
    flow: [calculator, cache-memory, {mode: ASYNC, children: [observer-passthrough]}]
"""


def test_validate_accepts_a_valid_pipeline(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "y.db", "pipeline", "validate", CALCULATOR)
    assert code == 0 and out.startswith("ok ")


def test_validate_lists_every_fault_with_code_and_path_and_exits_1(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "y.db", "pipeline", "validate", write(tmp_path, BAD))
    assert code == 1
    for expected in ("undefined_outside_group", "/capabilities/0/flow/0",
                     "capability_not_allowed", "/capabilities/0/flow/1",
                     "missing_fork", "missing_join"):  # fmt: skip
        assert expected in err


def test_validate_json(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "y.db", "pipeline", "validate", "--json", write(tmp_path, BAD))
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert [f["code"] for f in report["faults"]] == [
        "undefined_outside_group", "capability_not_allowed", "missing_fork", "missing_join",
    ]  # fmt: skip
    assert report["faults"][1]["path"] == "/capabilities/0/flow/1"


def test_run_prints_the_final_context_and_the_trace(tmp_path: Path) -> None:
    args = ("pipeline", "run", CALCULATOR, "--input", '{"question": "6*7"}')
    code, out, _ = run(tmp_path / "y.db", *args)
    assert code == 0
    assert out.startswith("success ") and '"answer": 42' in out and "stage calculate" in out
    code, out, _ = run(tmp_path / "y.db", *args, "--json")
    result = json.loads(out)
    assert code == 0 and result["context"]["answer"] == 42
    assert {e["kind"] for e in result["trace"]} >= {"capability", "stage", "group", "condition"}


def test_a_failing_run_exits_1_and_still_prints_its_trace(tmp_path: Path) -> None:
    path = write(tmp_path, "capabilities:\n  - capability: ACCESS\n    flow: [guardrail-basic]\n")
    code, out, _ = run(tmp_path / "y.db", "pipeline", "run", path, "--json")
    result = json.loads(out)
    assert code == 1 and result["status"] == "error"
    assert result["error"]["code"] == "invalid_parameters"
    assert result["trace"][1]["status"] == "error"


def test_run_refuses_an_invalid_pipeline_or_input(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "y.db", "pipeline", "run", write(tmp_path, BAD))
    assert code == 1 and "pipeline_invalid" in err and "missing_fork" in err
    code, _, _ = run(tmp_path / "y.db", "pipeline", "run", CALCULATOR, "--input", "[1]")
    assert code == 2


def test_diagram_prints_mermaid(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "y.db", "pipeline", "diagram", CALCULATOR)
    assert code == 0 and out.startswith("flowchart TD\n") and "if condition-expression" in out
    code, out, _ = run(tmp_path / "y.db", "pipeline", "diagram", CALCULATOR, "--json")
    assert code == 0 and json.loads(out)["diagram"].startswith("flowchart TD\n")


def test_palette_groups_plugins_and_control_components(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "y.db", "palette", "--capability", "CACHING", "--json")
    view = json.loads(out)
    assert code == 0
    assert [s["capability"] for s in view["sections"]] == ["CACHING", "Undefined"]
    assert [c["role"] for c in view["control"]] == ["CONDITION", "ITERATOR", "FORK", "JOIN"]
    code, out, _ = run(tmp_path / "y.db", "palette")
    assert code == 0 and "Undefined" in out and "JOIN" in out


OLO_LEGACY = str(Path(__file__).resolve().parents[1] / "pipelines/fixtures/olo-legacy-stages.json")


def test_validate_and_run_read_an_olo_engine_config_in_engine_mode_by_its_shape(
    tmp_path: Path,
) -> None:
    code, out, err = run(tmp_path / "y.db", "pipeline", "validate", OLO_LEGACY)
    assert code == 0 and "engine mode" in out and "undefined_outside_group" in err
    args = ("pipeline", "run", OLO_LEGACY, "--json", "--input", '{"text": "mail a@b.io"}')
    code, out, _ = run(tmp_path / "y.db", *args)
    report = json.loads(out)
    assert code == 0 and report["status"] == "success"
    assert [e["kind"] for e in report["trace"]].count("branch") == 2
