"""The REST API in process: auth, listing, execute and its errors, streaming, limits."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from plugyard.errors import ERROR_CODES


def _code(response: object) -> str:
    return str(response.json()["error"]["message"]["error"])  # type: ignore[attr-defined]


def _h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def test_probes_and_the_openapi_document_need_no_key(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["plugins"] >= 18
    spec = client.get("/openapi.json").json()
    assert "/api/v1/plugins/{plugin_id}/execute" in spec["paths"]
    assert "/api/plugins/register" in spec["paths"]
    assert client.get("/docs").status_code == 200


def test_api_routes_need_a_valid_key(client: TestClient, admin_key: str) -> None:
    assert _code(client.get("/api/v1/plugins")) == "unauthenticated"
    assert (
        client.get("/api/v1/plugins", headers=_h("pyk_000000000000_" + "x" * 43)).status_code == 401
    )
    bearer = {"Authorization": f"Bearer {admin_key}"}
    assert client.get("/api/v1/plugins", headers=bearer).status_code == 200


def test_a_revoked_key_stops_working(client: TestClient, yard: object, reader_key: str) -> None:
    assert client.get("/api/v1/plugins", headers=_h(reader_key)).status_code == 200
    keys = yard.keys  # type: ignore[attr-defined]
    assert keys.revoke(reader_key.split("_")[1])
    client.app.state.auth.forget()  # type: ignore[attr-defined]
    assert _code(client.get("/api/v1/plugins", headers=_h(reader_key))) == "unauthenticated"


def test_the_list_is_grouped_as_the_palette_and_filters(
    client: TestClient, reader_key: str
) -> None:
    body = client.get("/api/v1/plugins", headers=_h(reader_key)).json()
    names = [s["capability"] for s in body["sections"]]
    assert "Undefined" in names or names
    every = {p["id"] for s in body["sections"] for p in s["plugins"]}
    every |= {p["id"] for s in body["control"] for p in s["plugins"]}
    assert {"calculator", "ticker", "liar"} <= every
    kb = client.get("/api/v1/plugins", params={"family": "kb"}, headers=_h(reader_key)).json()
    kinds = {p["family"] for s in kb["sections"] for p in s["plugins"]}
    assert kinds == {"kb"}
    bad = client.get("/api/v1/plugins", params={"family": "widget"}, headers=_h(reader_key))
    assert bad.status_code == 400 and _code(bad) == "invalid_request"


def test_show_one_plugin_or_404(client: TestClient, reader_key: str) -> None:
    shown = client.get("/api/v1/plugins/calculator", headers=_h(reader_key)).json()
    assert shown["descriptor"]["id"] == "calculator"
    missing = client.get("/api/v1/plugins/nope", headers=_h(reader_key))
    assert missing.status_code == 404 and _code(missing) == "plugin_not_found"


def test_execute_answers_the_result_envelope(client: TestClient, reader_key: str) -> None:
    body = {"parameters": {"expression": "6*7"}, "user_context": {"user_id": "u1"}}
    response = client.post("/api/v1/plugins/calculator/execute", json=body, headers=_h(reader_key))
    assert response.status_code == 200
    result = response.json()
    assert result["status"] == "success" and result["data"]["result"] == 42
    assert result["request_id"]


def test_each_execute_error_code_has_its_status(client: TestClient, reader_key: str) -> None:
    cases = [
        ("nope", {}, "plugin_not_found"),
        ("calculator", {"parameters": {"expression": 6}}, "invalid_parameters"),
        ("calculator", {"operation": "nothing"}, "operation_not_found"),
    ]
    for plugin, body, code in cases:
        response = client.post(
            f"/api/v1/plugins/{plugin}/execute", json=body, headers=_h(reader_key)
        )
        status = ERROR_CODES[code].http_status
        assert response.status_code == status and _code(response) == code
        error = response.json()["error"]
        assert error["code"] == f"HTTP_{status}" and error["error_id"].startswith("ERR-")
        result = error["details"]["result"]  # what the call said, whole
        assert result["status"] == "error" and result["error"]["code"] == code
        assert result["request_id"] == error["details"]["request_id"]


def test_a_failed_call_keeps_its_faults_and_result_in_the_envelope(
    client: TestClient, reader_key: str
) -> None:
    body = {"parameters": {"expression": 6}}
    response = client.post("/api/v1/plugins/calculator/execute", json=body, headers=_h(reader_key))
    assert response.status_code == 422 and _code(response) == "invalid_parameters"
    details = response.json()["error"]["details"]
    assert [e["pointer"] for e in details["errors"]] == ["/expression"]
    result = details["result"]
    assert result["plugin_id"] == "calculator" and result["operation"]
    assert result["error"]["details"]["errors"] == details["errors"]
    assert "duration_ms" in result["cost"]


def test_output_validation_error_is_the_shu_500_envelope(
    client: TestClient, reader_key: str
) -> None:
    response = client.post("/api/v1/plugins/liar/execute", json={}, headers=_h(reader_key))
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == "HTTP_500"
    assert error["message"]["error"] == "output_validation_error"
    assert error["error_id"].startswith("ERR-")
    assert error["details"]["request_id"]
    assert error["details"]["result"]["error"]["code"] == "output_validation_error"


def test_bad_bodies_get_their_codes_and_the_server_keeps_serving(
    client: TestClient, reader_key: str
) -> None:
    url = "/api/v1/plugins/calculator/execute"
    json_type = {**_h(reader_key), "Content-Type": "application/json"}
    assert _code(client.post(url, content=b"{oops", headers=json_type)) == "invalid_request"
    assert _code(client.post(url, content=b"[1]", headers=json_type)) == "invalid_request"
    body = json.dumps({"parameters": "x"}).encode()
    assert _code(client.post(url, content=body, headers=json_type)) == "invalid_request"
    text = {**_h(reader_key), "Content-Type": "text/plain"}
    assert _code(client.post(url, content=b"{}", headers=text)) == "unsupported_media_type"
    huge = client.post(url, content=b"[" + b"1," * 40_000 + b"1]", headers=json_type)
    assert huge.status_code == 413 and _code(huge) == "request_too_large"

    def chunks():  # no Content-Length: the cap is counted as the body arrives
        for _ in range(100):
            yield b" " * 1024

    chunked = client.post(url, content=chunks(), headers=json_type)
    assert chunked.status_code == 413 and _code(chunked) == "request_too_large"
    assert client.post(url, json={"parameters": {"expression": "1+1"}},
                       headers=_h(reader_key)).json()["data"]["result"] == 2  # fmt: skip


def test_unknown_routes_and_methods_have_codes(client: TestClient) -> None:
    assert _code(client.get("/api/v2/nothing")) == "route_not_found"
    wrong = client.put("/healthz")
    assert wrong.status_code == 405 and _code(wrong) == "method_not_allowed"


def test_execute_streams_progress_then_the_result(client: TestClient, reader_key: str) -> None:
    body = {"parameters": {"n": 3}}
    with client.stream("POST", "/api/v1/plugins/ticker/execute/stream", json=body,
                       headers=_h(reader_key)) as response:  # fmt: skip
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    events = [block.split("\n") for block in text.strip().split("\n\n")]
    kinds = [e[0].removeprefix("event: ") for e in events]
    assert kinds == ["progress", "progress", "progress", "result"]
    assert json.loads(events[0][1].removeprefix("data: "))["message"] == "step 0"
    final = json.loads(events[-1][1].removeprefix("data: "))
    assert final["status"] == "success" and final["data"] == {"total": 3}


def test_accept_event_stream_on_execute_streams_too(client: TestClient, reader_key: str) -> None:
    headers = {**_h(reader_key), "Accept": "text/event-stream"}
    response = client.post("/api/v1/plugins/ticker/execute", json={"parameters": {"n": 1}},
                           headers=headers)  # fmt: skip
    assert response.text.startswith("event: progress")
    assert "event: result" in response.text


def test_registration_needs_an_admin(client: TestClient, reader_key: str) -> None:
    response = client.post("/api/v1/plugins/register", json={}, headers=_h(reader_key))
    assert response.status_code == 403 and _code(response) == "permission_denied"
    assert _code(client.delete("/api/v1/plugins/calculator", headers=_h(reader_key))) == (
        "permission_denied"
    )


def test_builtins_cannot_be_taken_over_or_removed_over_the_api(
    client: TestClient, admin_key: str
) -> None:
    body = {"plugin_id": "calculator", "name": "Evil", "description": "x", "type": "http",
            "config": {"base_url": "http://93.184.215.14"}, "capabilities": [],
            "health_check_url": "http://93.184.215.14/health"}  # fmt: skip
    response = client.post("/api/plugins/register", json=body, headers=_h(admin_key))
    assert response.status_code == 409 and _code(response) == "duplicate_plugin"
    gone = client.delete("/api/v1/plugins/calculator", headers=_h(admin_key))
    assert gone.status_code == 403 and _code(gone) == "permission_denied"
