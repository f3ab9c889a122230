"""The pipelines pages: palette, drops over HTTP, diagram, save, run with a trace."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi.testclient import TestClient

from .conftest import codes, csrf_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipelines" / "guarded-calculator.yaml"


def post(client: TestClient, page: str, json_answer: bool = False, **fields: str) -> object:
    data = {"csrf_token": csrf_of(page), "capability": "MODEL", **fields}
    headers = {"accept": "application/json"} if json_answer else {}
    return client.post("/console/pipelines/editor", data=data, headers=headers)


def test_the_palette_shows_the_capability_all_and_control_apart(admin: TestClient) -> None:
    page = admin.get("/console/pipelines/editor?capability=MODEL").text
    model = re.search(r'data-palette-section="MODEL">(.*?)</ul>', page, re.S)
    assert model is not None
    shown = re.findall(r'data-component="([^"]+)"', model.group(1))
    assert "guardrail-basic" in shown and "observer-passthrough" in shown
    assert "cache-memory" not in shown and "condition-expression" not in shown
    condition = re.search(r'data-palette-section="CONDITION">(.*?)</ul>', page, re.S)
    assert condition is not None and "condition-expression" in condition.group(1)


def test_a_refused_drop_answers_the_rule_code(admin: TestClient) -> None:
    page = admin.get("/console/pipelines/editor?capability=MODEL").text
    text = re.search(r'<textarea id="document"[^>]*>(.*?)</textarea>', page, re.S)
    assert text is not None
    reply = post(admin, page, json_answer=True, op="drop", document=text.group(1),
                 slot="/capabilities/0/flow", component="condition-expression")  # fmt: skip
    answer = reply.json()  # type: ignore[attr-defined]
    assert reply.status_code == 422 and answer["code"] == "role_misplaced"  # type: ignore[attr-defined]
    ok = post(
        admin,
        page,
        json_answer=True,
        op="drop",
        document=text.group(1),
        slot="/capabilities/0/flow",
        component="guardrail-basic",
    ).json()  # type: ignore[attr-defined]
    assert ok["ok"] and "guardrail-basic" in ok["document"] and "<svg" in ok["diagram"]
    assert 'data-node="/capabilities/0/flow/0"' in ok["tree"]


def test_without_script_a_drop_renders_the_page_again(admin: TestClient) -> None:
    page = admin.get("/console/pipelines/editor?capability=MODEL").text
    reply = post(admin, page, op="drop", document="name: d\ncapabilities: [{capability: MODEL}]",
                 slot="/capabilities/0/flow", component="cache-memory")  # fmt: skip
    assert reply.status_code == 422 and "capability_not_allowed" in codes(reply.text)  # type: ignore[attr-defined]


def test_save_run_and_trace(admin: TestClient) -> None:
    page = admin.get("/console/pipelines/editor").text
    document = EXAMPLE.read_text()
    saved = post(admin, page, op="save", document=document, name="guarded")
    assert 'data-saved="guarded"' in saved.text  # type: ignore[attr-defined]
    assert "guarded" in admin.get("/console/pipelines").text
    ran = post(admin, page, op="run", document=document, input=json.dumps({"question": "6*7"}))
    html = ran.text  # type: ignore[attr-defined]
    assert 'data-run-status="success"' in html
    assert re.findall(r'<tr data-seq="\d+">', html)
    assert 'class="pipeline-diagram"' in html and "flowchart TD" in html


def test_an_invalid_document_lists_its_faults(admin: TestClient) -> None:
    page = admin.get("/console/pipelines/editor").text
    reply = post(admin, page, op="validate",
                 document="capabilities: [{capability: MODEL, flow: [cache-memory]}]")  # fmt: skip
    assert 'data-code="capability_not_allowed"' in reply.text  # type: ignore[attr-defined]
