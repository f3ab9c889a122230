"""The reasoning routes: a request and its record, the stages as server-sent events, and
sessions and sources that belong to the key's subject."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

ATLAS = "# Tanzania\n\nZanzibar is an archipelago off Tanzania. Zanzibar exports cloves."


def h(key: str, **extra: str) -> dict[str, str]:
    return {"X-API-Key": key, **extra}


def code(reply: Any) -> str:
    return str(reply.json()["error"]["message"]["error"])


def test_a_request_answers_with_its_record_and_trace(client: TestClient, admin_key: str) -> None:
    body = {"prompt": "What does Zanzibar export?", "sources": [{"name": "atlas", "text": ATLAS}]}
    reply = client.post("/api/v1/reason", json=body, headers=h(admin_key))
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert answer["status"] == "answered" and "cloves" in answer["answer"]
    assert answer["citations"][0]["sourceLink"] == "atlas"
    assert answer["record"]["finalStatus"] == "success"
    assert {e["event"] for e in answer["trace"]} >= {"stage", "plan", "planner", "hook"}
    record = client.get(f"/api/v1/outcomes/{answer['requestId']}", headers=h(admin_key))
    assert record.status_code == 200 and record.json() == answer["record"]
    listed = client.get("/api/v1/outcomes", headers=h(admin_key)).json()
    assert listed[0]["requestId"] == answer["requestId"]


def events(text: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def test_the_stages_stream_as_server_sent_events(client: TestClient, admin_key: str) -> None:
    body = {"prompt": "What does Zanzibar export?", "sources": [{"name": "atlas", "text": ATLAS}]}
    for path, headers in (
        ("/api/v1/reason", {"Accept": "text/event-stream"}),
        ("/api/v1/reason/stream", {}),
    ):
        reply = client.post(path, json=body, headers=h(admin_key, **headers))
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        found = events(reply.text)
        kinds = [kind for kind, _ in found]
        assert kinds[-1] == "result" and found[-1][1]["status"] == "answered"
        stages = [data["stage"] for kind, data in found if kind == "stage"]
        assert stages[0] == "seed-detector" and "goal-solver" in stages
        assert kinds.index("plan") < kinds.index("result")


def test_a_stream_for_someone_elses_session_is_refused_before_it_starts(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    session = client.post("/api/v1/sessions", json={}, headers=h(admin_key)).json()["id"]
    reply = client.post(
        "/api/v1/reason/stream", json={"prompt": "x?", "session": session}, headers=h(reader_key)
    )
    assert reply.status_code == 404 and code(reply) == "session_not_found"


def test_a_session_keeps_its_turns_sources_and_units(client: TestClient, admin_key: str) -> None:
    created = client.post(
        "/api/v1/sessions",
        json={"kbName": "atlas", "preferences": {"kb": "kb-lexical"}},
        headers=h(admin_key),
    )
    assert created.status_code == 201
    session = created.json()["id"]
    source = client.post(
        f"/api/v1/sessions/{session}/sources",
        json={"name": "atlas.md", "text": ATLAS},
        headers=h(admin_key),
    )
    assert source.status_code == 201 and source.json()["unitCount"] == 1
    staged = client.post(
        f"/api/v1/sessions/{session}/units",
        json={"units": [{"text": "Cloves are dried flower buds."}]},
        headers=h(admin_key),
    )
    assert staged.json()["workspaceStats"]["stagedUnits"] == 1
    answer = client.post(
        "/api/v1/reason",
        json={"prompt": "What does Zanzibar export?", "session": session},
        headers=h(admin_key),
    ).json()
    assert answer["sessionId"] == session and answer["status"] == "answered"
    kb = [s["pluginId"] for s in answer["record"]["stages"] if s["stage"] == "kb"]
    assert kb[0] == "kb-lexical"  # the preference, first
    held = client.get(f"/api/v1/sessions/{session}", headers=h(admin_key)).json()
    assert (
        held["staged"] == [] and held["conversation"][0]["prompt"] == "What does Zanzibar export?"
    )
    assert next(u["text"] for u in held["committed"]) == "Cloves are dried flower buds."
    sources = client.get(f"/api/v1/sessions/{session}/sources", headers=h(admin_key)).json()
    assert [s["name"] for s in sources] == ["atlas.md"]
    mounted = client.put(
        f"/api/v1/sessions/{session}/kb", json={"kbId": "kb-9"}, headers=h(admin_key)
    ).json()
    assert mounted["kbId"] == "kb-9"
    saved = client.post(
        f"/api/v1/sessions/{session}/kb/save", json={"kbName": "saved"}, headers=h(admin_key)
    ).json()
    assert saved["kbName"] == "saved"
    forked = client.post(f"/api/v1/sessions/{session}/fork", headers=h(admin_key))
    assert forked.status_code == 201 and forked.json()["id"] != session
    assert (
        forked.json()["workspaceStats"]["committedUnits"]
        == held["workspaceStats"]["committedUnits"]
    )
    prefer = client.put(
        f"/api/v1/sessions/{session}/preferences",
        json={"preferences": {"goal-solver": "gs-extractive"}},
        headers=h(admin_key),
    )
    assert prefer.json()["preferences"] == {"goal-solver": "gs-extractive"}
    mine = [s["id"] for s in client.get("/api/v1/sessions", headers=h(admin_key)).json()]
    assert set(mine) == {session, forked.json()["id"]}


def test_another_key_sees_neither_the_session_nor_its_records(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    session = client.post("/api/v1/sessions", json={}, headers=h(admin_key)).json()["id"]
    answer = client.post(
        "/api/v1/reason", json={"prompt": "x?", "session": session}, headers=h(admin_key)
    ).json()
    for method, path in (
        ("GET", f"/api/v1/sessions/{session}"),
        ("GET", f"/api/v1/sessions/{session}/sources"),
        ("POST", f"/api/v1/sessions/{session}/fork"),
    ):
        reply = client.request(method, path, headers=h(reader_key))
        assert reply.status_code == 404 and code(reply) == "session_not_found", path
    reply = client.get(f"/api/v1/outcomes/{answer['requestId']}", headers=h(reader_key))
    assert reply.status_code == 404 and code(reply) == "outcome_not_found"
    assert client.get("/api/v1/outcomes", headers=h(reader_key)).json() == []
    assert client.get("/api/v1/sessions", headers=h(reader_key)).json() == []


def test_bad_requests_are_refused_with_their_codes(client: TestClient, admin_key: str) -> None:
    for body in (
        {"prompt": "   "},
        {"prompt": "x", "pins": {"dessert": "gs-llm"}},
        {"prompt": "x", "budget": -1},
        {"prompt": "x", "extra": 1},
    ):
        reply = client.post("/api/v1/reason", json=body, headers=h(admin_key))
        assert reply.status_code == 400 and code(reply) == "invalid_request", body
    pinned = client.post(
        "/api/v1/reason", json={"prompt": "x", "pins": {"kb": "gs-llm"}}, headers=h(admin_key)
    ).json()
    assert pinned["status"] == "failure" and pinned["error"]["code"] == "family_mismatch"
    missing = client.post(
        "/api/v1/reason", json={"prompt": "x", "session": "ses_nope"}, headers=h(admin_key)
    )
    assert missing.status_code == 404 and code(missing) == "session_not_found"
    assert client.post("/api/v1/reason", json={"prompt": "x"}).status_code == 401


def test_a_source_name_with_a_control_character_is_refused_with_its_pointer(
    client: TestClient, admin_key: str
) -> None:
    sources = [{"name": "atlas", "text": ATLAS}, {"name": "at\u0000las", "text": ATLAS}]
    for accept in ("application/json", "text/event-stream"):
        reply = client.post(
            "/api/v1/reason",
            json={"prompt": "What does Zanzibar export?", "sources": sources},
            headers=h(admin_key, Accept=accept),
        )
        assert reply.status_code == 400 and code(reply) == "invalid_source_name"
        pointers = [e["pointer"] for e in reply.json()["error"]["details"]["errors"]]
        assert pointers == ["/body/sources/1/name"]
    session = client.post("/api/v1/sessions", json={}, headers=h(admin_key)).json()["id"]
    upload = client.post(
        f"/api/v1/sessions/{session}/sources",
        json={"name": "evil\u202etxt.exe", "text": ATLAS},
        headers=h(admin_key),
    )
    assert upload.status_code == 400 and code(upload) == "invalid_source_name"
    assert upload.json()["error"]["details"]["errors"][0]["pointer"] == "/body/name"
    listed = client.get(f"/api/v1/sessions/{session}/sources", headers=h(admin_key)).json()
    assert listed == []
