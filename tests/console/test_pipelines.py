"""The pipelines pages: palette, drops over HTTP, diagram, save, run with a trace."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi.testclient import TestClient

from plugyard.yard import Yard

from .conftest import codes, csrf_of, signed_in

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


def test_neither_a_reader_nor_a_key_without_roles_stores_a_pipeline(
    app: object, yard: Yard, keys: dict[str, str]
) -> None:
    nobody = yard.keys.create("nobody", ())[1]
    for key in (keys["reader"], nobody):
        with signed_in(app, key) as client:
            page = client.get("/console/pipelines/editor").text
            assert 'value="save"' not in page  # not offered…
            refused = post(client, page, op="save", document=EXAMPLE.read_text(), name="x")
            assert refused.status_code == 403  # type: ignore[attr-defined]
            assert codes(refused.text) == ["permission_denied"]  # type: ignore[attr-defined]
    assert yard.pipelines.list() == ()  # …and not done


def test_a_console_save_is_audited_and_records_who_saved(admin: TestClient, yard: Yard) -> None:
    page = admin.get("/console/pipelines/editor").text
    post(admin, page, op="save", document=EXAMPLE.read_text(), name="guarded")
    stored = yard.pipelines.get("guarded")
    assert stored.saved_by == "admin"
    assert 'data-saved-by="admin"' in admin.get("/console/pipelines").text
    events = [r for r in yard.admin.tail(50) if r.kind == "pipeline"]
    assert [(e.status, e.subject, e.detail["name"], e.detail["content_hash"]) for e in events] == [
        ("saved", "admin", "guarded", stored.content_hash)
    ]


def test_the_pipelines_page_lists_the_viewers_runs_and_an_admin_every_run(
    app: object, admin: TestClient, clerk: TestClient, yard: Yard, keys: dict[str, str]
) -> None:
    document = EXAMPLE.read_text()
    runs = {}
    for name, client in (("admin", admin), ("clerk", clerk)):
        page = client.get("/console/pipelines/editor").text
        ran = post(client, page, op="run", document=document, input='{"question": "1+1"}')
        found = re.search(r"Run <code>([^<]+)</code>", ran.text)  # type: ignore[attr-defined]
        assert found is not None
        runs[name] = found.group(1)
    clerk_sees = clerk.get("/console/pipelines").text
    assert runs["clerk"] in clerk_sees and runs["admin"] not in clerk_sees
    admin_sees = admin.get("/console/pipelines").text
    assert runs["clerk"] in admin_sees and runs["admin"] in admin_sees
