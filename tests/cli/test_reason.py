"""``plugyard reason`` and ``plugyard outcomes`` on a fresh data folder, offline."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from plugyard.cli.main import cli

ENV = {"PLUGYARD_EMBEDDER": "hashing"}
ATLAS = "# Zanzibar\n\nZanzibar is an archipelago off Tanzania. Zanzibar exports cloves.\n"


def run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "y.db"), *args], env=ENV)
    return result.exit_code, result.stdout, result.stderr


def test_reason_prints_the_trace_then_the_cited_answer(tmp_path: Path) -> None:
    atlas = tmp_path / "atlas.md"
    atlas.write_text(ATLAS)
    code, out, err = run(tmp_path, "reason", "What does Zanzibar export?", "--source", str(atlas))
    assert code == 0, out + err
    lines = out.splitlines()
    assert any(line.startswith("seed-detector  sd-rules") for line in lines)
    assert any(line.startswith("plan 1 by plan-learning") for line in lines)
    assert any(line.startswith("validation     val-grounded") for line in lines)
    assert "answered:" in lines
    assert any("exports cloves. [1]" in line for line in lines)
    assert "  [1] Zanzibar atlas.md" in lines


def test_reason_json_is_the_answer_with_its_record_and_trace(tmp_path: Path) -> None:
    code, out, _ = run(
        tmp_path, "reason", "Who wrote Hamlet?", "--json", "--pin", "gs=gs-extractive"
    )
    assert code == 0
    answer = json.loads(out)
    assert answer["status"] == "no-context"
    assert answer["record"]["finalStatus"] == "success"
    solvers = {s["pluginId"] for s in answer["record"]["stages"] if s["stage"] == "goal-solver"}
    assert solvers == {"gs-extractive"}
    assert {e["event"] for e in answer["trace"]} >= {"stage", "plan", "planner"}


def test_a_session_carries_over_between_invocations(tmp_path: Path) -> None:
    atlas = tmp_path / "atlas.md"
    atlas.write_text(ATLAS)
    code, _, err = run(tmp_path, "reason", "What does Zanzibar export?", "--new-session",
                       "--source", str(atlas))  # fmt: skip
    assert code == 0
    session = next(line.split()[1] for line in err.splitlines() if line.startswith("session "))
    code, out, _ = run(tmp_path, "reason", "Zanzibar exports what?", "--session", session, "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["sessionId"] == session and "cloves" in answer["answer"]


def test_a_failed_request_exits_1_and_bad_input_is_refused(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "reason", "anything", "--pin", "kb=gs-extractive", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "family_mismatch"
    code, _, err = run(tmp_path, "reason", "anything", "--pin", "nonsense")
    assert code == 2 and "STAGE=PLUGIN" in err
    code, out, _ = run(tmp_path, "reason", "anything", "--session", "ses_nope", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "session_not_found"


def test_outcomes_lists_the_records_newest_first(tmp_path: Path) -> None:
    run(tmp_path, "reason", "First question?")
    run(tmp_path, "reason", "anything", "--pin", "kb=gs-extractive")
    code, out, _ = run(tmp_path, "outcomes", "--json")
    assert code == 0
    records = json.loads(out)
    assert [r["finalStatus"] for r in records] == ["failure", "success"]
    assert records[0]["error"]["code"] == "family_mismatch"
    code, out, _ = run(tmp_path, "outcomes")
    assert code == 0 and "[family_mismatch]" in out.splitlines()[0]
