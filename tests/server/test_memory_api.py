"""Learning over HTTP: a search's id, a call that names it, feedback and its errors, and
the admin-only view of what a plugin's memory holds."""

from __future__ import annotations

from fastapi.testclient import TestClient

from plugyard.yard import Yard


def _h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def _code(response: object) -> str:
    return str(response.json()["error"]["message"]["error"])  # type: ignore[attr-defined]


def _search(client: TestClient, key: str, q: str = "work out six times seven") -> str:
    reply = client.get("/api/v1/search", params={"q": q, "k": 3}, headers=_h(key))
    assert reply.status_code == 200
    search_id = reply.json()["search_id"]
    assert isinstance(search_id, str) and search_id
    return search_id


def test_a_call_naming_its_search_is_remembered_for_the_caller(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    search_id = _search(client, reader_key)
    body = {"parameters": {"expression": "6*7"}, "search_id": search_id}
    done = client.post("/api/v1/plugins/calculator/execute", json=body, headers=_h(reader_key))
    assert done.status_code == 200 and done.json()["status"] == "success"
    shown = client.get("/api/v1/plugins/calculator/memory", headers=_h(admin_key)).json()
    (row,) = shown["remembered"]
    assert (row["subject"], row["query"]) == ("reader", "work out six times seven")
    # A failed call teaches nothing.
    other = _search(client, reader_key, "divide by nothing")
    body = {"parameters": {"expression": "1/"}, "search_id": other}
    client.post("/api/v1/plugins/calculator/execute", json=body, headers=_h(reader_key))
    shown = client.get("/api/v1/plugins/calculator/memory", headers=_h(admin_key)).json()
    assert len(shown["remembered"]) == 1


def test_feedback_records_once_and_reports_what_it_did(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    search_id = _search(client, reader_key)
    url = f"/api/v1/search/{search_id}/feedback"
    first = client.post(url, json={"plugin": "calculator"}, headers=_h(reader_key))
    assert first.status_code == 200 and first.json() == {"recorded": True, "reason": "recorded"}
    again = client.post(url, json={"plugin": "calculator"}, headers=_h(reader_key))
    assert again.json() == {"recorded": False, "reason": "duplicate"}
    undo = client.post(url, json={"plugin": "calculator", "helpful": False}, headers=_h(reader_key))
    assert undo.json() == {"recorded": False, "reason": "removed"}


def test_bad_feedback_answers_documented_codes(client: TestClient, reader_key: str) -> None:
    search_id = _search(client, reader_key)
    cases = [
        ("nope", {"plugin": "calculator"}, 404, "unknown_search"),
        (search_id, {"plugin": "no-such-plugin"}, 404, "plugin_not_found"),
        (search_id, {"plugin": "calculator", "operation": "nope"}, 404, "operation_not_found"),
        (search_id, {"plugin": "calculator", "helpful": "yes"}, 400, "invalid_request"),
        (search_id, {"plugin": "x" * 201}, 400, "invalid_request"),
    ]
    for sid, body, status, code in cases:
        reply = client.post(f"/api/v1/search/{sid}/feedback", json=body, headers=_h(reader_key))
        assert (reply.status_code, _code(reply)) == (status, code), body


def test_only_admins_read_and_purge_a_plugins_memory(
    client: TestClient, yard: Yard, admin_key: str, reader_key: str
) -> None:
    search_id = _search(client, reader_key)
    client.post(
        f"/api/v1/search/{search_id}/feedback", json={"plugin": "calculator"},
        headers=_h(reader_key),
    )  # fmt: skip
    for method in ("GET", "DELETE"):
        denied = client.request(method, "/api/v1/plugins/calculator/memory", headers=_h(reader_key))
        assert denied.status_code == 403
    purged = client.delete("/api/v1/plugins/calculator/memory", headers=_h(admin_key))
    assert purged.json() == {"plugin_id": "calculator", "purged": 1}
    assert yard.discovery.learning.remembered("calculator") == []


def test_feedback_is_the_keys_subjects_and_never_the_bodys(
    client: TestClient, admin_key: str, reader_key: str
) -> None:
    # Another subject's search id is unknown to this key.
    admins = _search(client, admin_key)
    reply = client.post(
        f"/api/v1/search/{admins}/feedback", json={"plugin": "calculator"},
        headers=_h(reader_key),
    )  # fmt: skip
    assert (reply.status_code, _code(reply)) == (404, "unknown_search")
    # A subject named in the body changes nothing: the record is the key's subject's.
    mine = _search(client, reader_key)
    client.post(
        f"/api/v1/search/{mine}/feedback",
        json={"plugin": "calculator", "subject": "admin"},
        headers=_h(reader_key),
    )
    shown = client.get("/api/v1/plugins/calculator/memory", headers=_h(admin_key)).json()
    assert [row["subject"] for row in shown["remembered"]] == ["reader"]
