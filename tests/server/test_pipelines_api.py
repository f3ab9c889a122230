"""Pipelines over HTTP: validate, store, run, read the trace."""

from __future__ import annotations

from pathlib import Path

import yaml
from fastapi.testclient import TestClient

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipelines" / "guarded-calculator.yaml"


def document() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def code_of(response: object) -> str:
    return str(response.json()["error"]["message"]["error"])  # type: ignore[attr-defined]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_validate_lists_every_fault_with_its_pointer(client: TestClient, reader_key: str) -> None:
    bad = {"name": "bad", "capabilities": [{"capability": "TOOL", "flow": ["nope", "nope2"]}]}
    answer = client.post("/api/v1/pipelines/validate", json=bad, headers=auth(reader_key))
    assert answer.status_code == 200
    body = answer.json()
    assert body["ok"] is False
    assert len(body["faults"]) >= 2
    assert [f["path"] for f in body["faults"]] == [
        "/capabilities/0/flow/0",
        "/capabilities/0/flow/1",
    ]


def test_store_run_and_read_the_trace(client: TestClient, admin_key: str) -> None:
    stored = client.put("/api/v1/pipelines/calc", json=document(), headers=auth(admin_key))
    assert stored.status_code == 200, stored.text
    listed = client.get("/api/v1/pipelines", headers=auth(admin_key)).json()
    assert [p["name"] for p in listed["pipelines"]] == ["calc"]
    run = client.post(
        "/api/v1/pipelines/run",
        json={"name": "calc", "input": {"question": "6*7"}},
        headers=auth(admin_key),
    )
    assert run.status_code == 200, run.text
    result = run.json()
    assert result["status"] == "success"
    assert result["trace"]
    trace = client.get(f"/api/v1/pipeline-runs/{result['run_id']}", headers=auth(admin_key))
    assert trace.status_code == 200
    assert "context" not in trace.json() or trace.json()["context"] is None


def test_an_invalid_document_is_refused_with_pipeline_invalid(
    client: TestClient, admin_key: str
) -> None:
    bad = {"name": "bad", "capabilities": [{"capability": "TOOL", "flow": ["nope"]}]}
    answer = client.put("/api/v1/pipelines/bad", json=bad, headers=auth(admin_key))
    assert answer.status_code == 422
    assert "pipeline_invalid" in answer.text
    run = client.post("/api/v1/pipelines/run", json={"document": bad}, headers=auth(admin_key))
    assert run.status_code == 422


def test_storing_needs_an_admin_and_unknown_names_are_404(
    client: TestClient, reader_key: str
) -> None:
    denied = client.put("/api/v1/pipelines/calc", json=document(), headers=auth(reader_key))
    assert denied.status_code == 403
    missing = client.get("/api/v1/pipelines/none", headers=auth(reader_key))
    assert missing.status_code == 404
    assert client.get("/api/v1/pipeline-runs/none", headers=auth(reader_key)).status_code == 404


def test_a_reader_may_not_store_or_delete_and_is_told_which_right(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    refused = client.put("/api/v1/pipelines/calc", json=document(), headers=auth(reader_key))
    assert refused.status_code == 403
    assert code_of(refused) == "permission_denied"
    assert refused.json()["error"]["details"] == {"right": "pipeline.save"}
    assert client.put("/api/v1/pipelines/calc", json=document(), headers=auth(admin_key)).is_success
    gone = client.delete("/api/v1/pipelines/calc", headers=auth(reader_key))
    assert gone.status_code == 403 and gone.json()["error"]["details"] == {
        "right": "pipeline.delete"
    }


def test_saves_and_deletes_are_audited_with_who_what_and_the_digest(
    client: TestClient, admin_key: str
) -> None:
    stored = client.put("/api/v1/pipelines/calc", json=document(), headers=auth(admin_key)).json()
    assert stored["saved_by"] == "admin"
    assert client.delete("/api/v1/pipelines/calc", headers=auth(admin_key)).is_success
    events = client.get("/api/v1/audit?count=50", headers=auth(admin_key)).json()
    mine = [(e["status"], e["subject"], e["detail"]) for e in events if e["kind"] == "pipeline"]
    detail = {"name": "calc", "content_hash": stored["content_hash"], "dialect": "plugyard"}
    assert mine == [("saved", "admin", detail), ("deleted", "admin", detail)]


def test_another_subjects_run_answers_not_found_and_an_admin_sees_it(
    client: TestClient, yard: object, admin_key: str, reader_key: str
) -> None:
    other = yard.keys.create("other", ())[1]  # type: ignore[attr-defined]
    ran = client.post("/api/v1/pipelines/run", json={"document": document(),
                      "input": {"question": "6*7"}}, headers=auth(reader_key))  # fmt: skip
    run_id = ran.json()["run_id"]
    assert client.get(f"/api/v1/pipeline-runs/{run_id}", headers=auth(reader_key)).is_success
    hidden = client.get(f"/api/v1/pipeline-runs/{run_id}", headers=auth(other))
    assert hidden.status_code == 404
    assert code_of(hidden) == "pipeline_run_not_found"
    seen = client.get(f"/api/v1/pipeline-runs/{run_id}", headers=auth(admin_key))
    assert seen.is_success and seen.json()["subject"] == "reader"


def test_running_a_pipeline_another_saved_shows_who_saved_it(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    stored = client.put("/api/v1/pipelines/calc", json=document(), headers=auth(admin_key)).json()
    ran = client.post("/api/v1/pipelines/run", json={"name": "calc", "input": {"question": "1+1"}},
                      headers=auth(reader_key)).json()  # fmt: skip
    expected = {"name": "calc", "saved_by": "admin", "content_hash": stored["content_hash"]}
    assert ran["subject"] == "reader" and ran["stored"] == expected
    trace = client.get(f"/api/v1/pipeline-runs/{ran['run_id']}", headers=auth(reader_key))
    assert trace.json()["stored"] == expected
