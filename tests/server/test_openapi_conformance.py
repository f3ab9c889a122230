"""The server and its OpenAPI document say the same thing, one class of mismatch at a
time: what the document allows is accepted, what it forbids is refused with
``invalid_request`` (or the route's precise 4xx) and the pointer of the fault, a wrong
method is a 405 with the resource's methods, every route lists what it answers, and
every refusal is the one error envelope."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient


def h(key: str, **extra: str) -> dict[str, str]:
    return {"X-API-Key": key, **extra}


def refusal(reply: Any) -> tuple[int, str, list[str]]:
    """Status, code and fault pointers of an error envelope (asserting it is one)."""
    error = reply.json()["error"]
    assert error["code"] == f"HTTP_{reply.status_code}" and error["error_id"].startswith("ERR-")
    pointers = [f["pointer"] for f in error["details"].get("errors", [])]
    return reply.status_code, error["message"]["error"], pointers


@pytest.fixture
def spec(client: TestClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json").json()
    return document


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
    ]


# ------------------------------------------------------------------- methods and Allow


def test_a_wrong_method_is_405_with_every_method_of_the_resource(
    client: TestClient, admin_key: str
) -> None:
    for method, path, allow in [
        ("OPTIONS", "/api/v1/policy", "GET, PUT"),
        ("PATCH", "/api/v1/pipelines/x", "DELETE, GET, PUT"),
        ("POST", "/api/v1/plugins/x", "DELETE, GET"),
        ("GET", "/api/v1/plugins/x/execute", "POST"),
    ]:
        reply = client.request(method, path, headers=h(admin_key))
        assert refusal(reply)[:2] == (405, "method_not_allowed")
        assert reply.headers["allow"] == allow


def test_a_concrete_path_is_not_taken_by_a_template(client: TestClient, admin_key: str) -> None:
    for method, path in [
        ("GET", "/api/v1/plugins/register"),
        ("DELETE", "/api/v1/feeds/run-due"),
        ("GET", "/api/v1/pipelines/run"),
    ]:
        reply = client.request(method, path, headers=h(admin_key))
        assert refusal(reply)[:2] == (405, "method_not_allowed")
        assert method not in reply.headers["allow"]


# ------------------------------------------------- what the document allows is accepted


def test_an_integral_timeout_written_as_a_float_is_an_integer(
    client: TestClient, admin_key: str
) -> None:
    body = {"parameters": {"expression": "1+1"}, "timeout_ms": 1209.0}
    reply = client.post("/api/v1/plugins/calculator/execute", json=body, headers=h(admin_key))
    assert reply.status_code == 200 and reply.json()["data"]["result"] == 2


def test_every_documented_family_and_capability_filter_is_accepted(
    client: TestClient, admin_key: str
) -> None:
    for family in ("tool", "sd", "kb", "gs", "val", "plan"):
        params = {"family": family, "capability": ["TOOL", "MEMORY"]}
        assert client.get("/api/v1/plugins", params=params, headers=h(admin_key)).status_code == 200
    found = client.get("/api/v1/search", params={"q": "add numbers", "family": ["tool", "kb"],
                       "capability": "TOOL"}, headers=h(admin_key))  # fmt: skip
    assert found.status_code == 200


# ---------------------------------------------- what the document forbids is refused


@pytest.mark.parametrize(
    ("path", "params", "pointer"),
    [
        ("/api/v1/plugins", {"capability": "-1.5e-305"}, "/query/capability/0"),
        ("/api/v1/plugins", {"family": ""}, "/query/family"),
        ("/api/v1/search", {"q": "x", "capability": "two words"}, "/query/capability"),
        ("/api/v1/search", {"q": " \t\x1c"}, "/query/q"),
        ("/api/v1/tools", {"q": "x", "family": "widget"}, "/query/family/0"),
    ],
)
def test_a_bad_query_value_is_refused_with_its_pointer(
    client: TestClient, admin_key: str, path: str, params: dict[str, Any], pointer: str
) -> None:
    reply = client.get(path, params=params, headers=h(admin_key))
    assert refusal(reply) == (400, "invalid_request", [pointer])


@pytest.mark.parametrize("count", ["1_0", " 1", "1.0", "1e1"])
def test_a_query_integer_is_its_digits(client: TestClient, admin_key: str, count: str) -> None:
    reply = client.get("/api/v1/audit", params={"count": count}, headers=h(admin_key))
    assert refusal(reply) == (400, "invalid_request", ["/query/count"])
    assert client.get("/api/v1/audit?count=%2B5", headers=h(admin_key)).status_code == 200


def test_a_one_value_query_parameter_given_twice_is_refused(
    client: TestClient, admin_key: str
) -> None:
    twice = [
        ("GET", "/api/v1/search?q=a&k=1&k=2", "/query/k"),
        ("POST", "/api/v1/plugins/calculator/execute?operation=a&operation=b", "/query/operation"),
    ]
    for method, url, pointer in twice:
        reply = client.request(method, url, headers=h(admin_key))
        assert refusal(reply) == (400, "invalid_request", [pointer])
    listed = client.get("/api/v1/plugins?capability=A&capability=B", headers=h(admin_key))
    assert listed.status_code == 200


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("approval_receipt", None),
        ("approval_receipt", 5),
        ("timeout_ms", "5"),
        ("timeout_ms", True),
        ("timeout_ms", 0),
        ("timeout_ms", 1.5),
        ("debug", None),
        ("debug", 1),
        ("parameters", None),
        ("user_context", []),
        ("operation", None),
    ],
)
def test_an_execute_member_of_the_wrong_kind_is_refused_before_the_call(
    client: TestClient, admin_key: str, member: str, value: Any
) -> None:
    for path in ("execute", "execute/stream"):
        url = f"/api/v1/plugins/calculator/{path}"
        reply = client.post(url, json={"parameters": {"expression": "1"}, member: value},
                            headers=h(admin_key))  # fmt: skip
        assert refusal(reply) == (400, "invalid_request", [f"/body/{member}"])


@pytest.mark.parametrize("receipt", [None, 5, ["r"], {"r": 1}])
def test_an_action_receipt_that_is_not_a_string_is_refused(
    client: TestClient, admin_key: str, receipt: Any
) -> None:
    body = {"args": {"to": "x@example.org"}, "approval_receipt": receipt}
    reply = client.post("/api/v1/actions/mailer/send", json=body, headers=h(admin_key))
    assert refusal(reply) == (400, "invalid_request", ["/body/approval_receipt"])


@pytest.mark.parametrize("key", ["", " ", "k" * 256])
def test_a_malformed_idempotency_key_is_refused_before_a_stream_starts(
    client: TestClient, admin_key: str, key: str
) -> None:
    for path in ("execute", "execute/stream"):
        reply = client.post(f"/api/v1/plugins/calculator/{path}", json={},
                            headers=h(admin_key, **{"Idempotency-Key": key}))  # fmt: skip
        assert reply.status_code == 400, reply.text


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"plugin_id": "mailer", "operation": "outbox", "interval_s": 0.5}, "invalid_schedule"),
        ({"plugin_id": "mailer", "operation": "outbox", "cron": "0 0 31 4 *"}, "invalid_schedule"),
        ({"plugin_id": "mailer", "operation": "outbox", "cron": "* * * * MON"}, "invalid_schedule"),
        ({"plugin_id": "mailer", "operation": "outbox"}, "invalid_schedule"),
        ({"plugin_id": "mailer", "interval_s": 60, "cron": "* * * * *"}, "invalid_schedule"),
        ({"plugin_id": "mailer", "interval_s": "60"}, "invalid_request"),
        ({"plugin_id": "mailer", "interval_s": None, "cron": "* * * * *"}, "invalid_request"),
    ],
)
def test_a_feed_schedule_outside_the_document_is_refused(
    client: TestClient, admin_key: str, body: dict[str, Any], code: str
) -> None:
    reply = client.post("/api/v1/feeds", json=body, headers=h(admin_key))
    assert refusal(reply)[:2] == (400, code)


def test_a_secret_name_outside_the_pattern_is_refused_by_its_path(
    client: TestClient, admin_key: str
) -> None:
    reply = client.put("/api/v1/secrets/two words", json={"value": "v"}, headers=h(admin_key))
    assert refusal(reply) == (400, "invalid_request", ["/path/name"])


def test_a_run_needs_a_document_or_a_name(client: TestClient, admin_key: str) -> None:
    for body in ({}, {"input": {}}, {"document": None}, {"name": "x", "input": [1]}):
        reply = client.post("/api/v1/pipelines/run", json=body, headers=h(admin_key))
        assert refusal(reply)[:2] == (400, "invalid_request")


def test_a_package_form_has_one_field(client: TestClient, admin_key: str) -> None:
    reply = client.post("/api/v1/packages", files={"package": ("p.zip", b"PK")},
                        data={"extra": "1"}, headers=h(admin_key))  # fmt: skip
    assert refusal(reply) == (400, "invalid_request", ["/body/extra"])


def test_a_json_route_refuses_another_media_type(client: TestClient, admin_key: str) -> None:
    for method, url in [("POST", "/api/v1/feeds"), ("POST", "/api/v1/pipelines/run"),
                        ("POST", "/api/v1/actions/mailer/send")]:  # fmt: skip
        reply = client.request(method, url, content=b'{"a": 1}',
                               headers=h(admin_key, **{"Content-Type": "text/plain"}))  # fmt: skip
        assert refusal(reply)[:2] == (415, "unsupported_media_type")


# ---------------------------------------------------------------- the document itself


def test_every_api_route_declares_the_key_and_answers_401_without_it(
    client: TestClient, spec: dict[str, Any]
) -> None:
    for method, path, operation in operations(spec):
        if not path.startswith("/api"):
            continue
        assert operation["security"] == [{"APIKeyHeader": []}], (method, path)
        assert "401" in operation["responses"], (method, path)
        url = path.replace("{", "").replace("}", "")
        reply = client.request(method, url, json={})
        assert refusal(reply)[:2] == (401, "unauthenticated"), (method, path)


def test_every_route_documents_its_refusals_in_the_error_envelope(
    spec: dict[str, Any],
) -> None:
    envelope = "#/components/schemas/ErrorEnvelope"
    for method, path, operation in operations(spec):
        responses = operation["responses"]
        assert {"404", "405", "413", "500"} <= responses.keys(), (method, path)
        for status, answer in responses.items():
            if int(status) < 400:
                continue
            schema = answer["content"]["application/json"]["schema"]
            assert schema == {"$ref": envelope}, (method, path, status)
            headers = {"401": {"WWW-Authenticate"}, "405": {"Allow"}}.get(status, set())
            assert headers <= set(answer.get("headers", {})), (method, path, status)


def test_the_document_has_no_framework_validation_body_and_resolves(
    spec: dict[str, Any],
) -> None:
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    policy = spec["paths"]["/api/v1/policy"]["put"]["requestBody"]["content"]
    assert "$defs" not in policy["application/json"]["schema"]
    assert {"Grant", "Approvals", "SubjectEntry", "RoleEntry"} <= schemas.keys()
    headers = spec["paths"]["/api/v1/plugins/{plugin_id}/execute"]["post"]["parameters"]
    assert "Idempotency-Key" in [p["name"] for p in headers]


# ------------------------------------------------------ one envelope, faults with pointers


def test_a_pipeline_refusal_lists_its_problems(client: TestClient, admin_key: str) -> None:
    reply = client.put("/api/v1/pipelines/p", json={}, headers=h(admin_key))
    assert refusal(reply)[:2] == (422, "pipeline_invalid")
    assert reply.json()["error"]["details"]["problems"][0]["pointer"] == ""
