"""One error shape: every answer that is not a 2xx, of every route, is the Shu error
envelope (docs/server.md, "Errors"), a 401 carries its challenges and a 405 its
``Allow``. The routes come from the OpenAPI document, so a new route is walked too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from httpx import Response

from plugyard.errors import ERROR_CODES

#: The envelope as docs/server.md states it, written out here rather than taken from the
#: server's models, so that the two are held together.
ENVELOPE: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "additionalProperties": False,
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details", "error_id"],
            "additionalProperties": False,
            "properties": {
                "code": {"type": "string", "pattern": "^HTTP_[45][0-9]{2}$"},
                "message": {
                    "type": "object",
                    "required": ["error", "message"],
                    "additionalProperties": False,
                    "properties": {
                        "error": {"enum": sorted(ERROR_CODES)},
                        "message": {"type": "string"},
                    },
                },
                "details": {"type": "object"},
                "error_id": {"type": "string", "pattern": "^ERR-[0-9a-f]{16}$"},
            },
        }
    },
}
_CHECK = jsonschema.Draft202012Validator(ENVELOPE)
_METHODS = ("get", "put", "post", "delete", "patch")
#: The routes whose unknown id is not an HTTP error: the Shu Actions API answers an
#: ActionResult, ``status: error`` with HTTP 200 (docs/governance.md), and a stream has
#: answered 200 before the call fails, so the failure is its ``result`` event.
IN_THE_BODY = {
    ("post", "/api/v1/actions/{plugin_id}/{action}"),
    ("post", "/api/v1/plugins/{plugin_id}/execute/stream"),
}


def assert_envelope(response: Response) -> str:
    """The body is the envelope, its ``HTTP_<status>`` the response's, its code one whose
    status that is; the headers its status calls for. Returns the plugyard code."""
    assert response.headers["content-type"] == "application/json", response.text
    body = response.json()
    _CHECK.validate(body)
    error = body["error"]
    code = error["message"]["error"]
    assert error["code"] == f"HTTP_{response.status_code}", response.text
    assert ERROR_CODES[code].http_status == response.status_code, response.text
    if response.status_code == 401:
        challenges = response.headers.get_list("www-authenticate")
        assert [c.split(" ", 1)[0] for c in challenges] == ["Bearer", "ApiKey"], challenges
        assert all('realm="plugyard"' in c for c in challenges), challenges
    if response.status_code == 405:
        assert response.headers["allow"], response.headers
    return str(code)


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method in _METHODS:
            if method in item:
                yield method, path, item[method]


@pytest.fixture
def spec(client: TestClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json").json()
    return document


def _fill(path: str, operation: dict[str, Any]) -> str:
    """``path`` with every parameter an id nothing has (a documented value where the
    parameter takes only some)."""
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            enum = parameter.get("schema", {}).get("enum")
            value = enum[0] if enum else "no-such-thing"
            path = path.replace("{" + parameter["name"] + "}", value)
    return path


def _scalar_query(operation: dict[str, Any]) -> str | None:
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        branches = schema.get("anyOf") or [schema]
        if parameter["in"] == "query" and all(b.get("type") != "array" for b in branches):
            return str(parameter["name"])
    return None


def provocations(
    method: str, path: str, operation: dict[str, Any], key: str
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """``(what, method, url, request arguments)``: the ways to get this route to refuse."""
    url = _fill(path, operation)
    keyed = {"X-API-Key": key}
    if operation.get("security"):
        yield "no key", method, url, {}
        yield "a bad key", method, url, {"headers": {"X-API-Key": "pyk_000000000000_" + "x" * 43}}
    yield "a wrong method", "patch" if method != "patch" else "put", url, {"headers": keyed}
    content = operation.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        json_type = {**keyed, "Content-Type": "application/json"}
        yield "malformed JSON", method, url, {"content": b"{oops", "headers": json_type}
        yield "a body that is not an object", method, url, {"content": b"[1]", "headers": json_type}
    if content and "application/yaml" not in content:  # a policy is read as YAML text
        text = {**keyed, "Content-Type": "text/plain"}
        yield "a body of another type", method, url, {"content": b"{}", "headers": text}
    name = _scalar_query(operation)
    if name is not None:
        twice = f"{url}?{name}=1&{name}=2"
        yield "a one-value query given twice", method, twice, {"headers": keyed}
    if "{" in path:
        yield "an unknown id", method, url, {"headers": keyed}


def test_every_route_refuses_with_the_one_envelope(
    client: TestClient, admin_key: str, spec: dict[str, Any]
) -> None:
    """Each route is sent what it must refuse — no key, a key that is not valid, a wrong
    method, malformed JSON, a body of another type, a one-value query twice, an unknown
    id — and every non-2xx answer is the envelope, with a status and code the route
    documents."""
    walked = 0
    for method, path, operation in _operations(spec):
        seen: dict[str, int] = {}
        for what, sent, url, arguments in provocations(method, path, operation, admin_key):
            response = client.request(sent.upper(), url, **arguments)
            label = f"{method.upper()} {path}, {what}: {response.status_code} {response.text}"
            seen[what] = response.status_code
            if response.status_code < 400:
                assert what == "an unknown id" and (method, path) in IN_THE_BODY, label
                continue
            code = assert_envelope(response)
            if sent == method:
                documented = operation["responses"].get(str(response.status_code))
                assert documented is not None, label
                assert f"`{code}`" in documented["description"], label
        assert seen["a wrong method"] == 405
        if operation.get("security"):
            assert seen["no key"] == seen["a bad key"] == 401, (method, path, seen)
        for what in ("malformed JSON", "a body that is not an object"):
            assert seen.get(what, 400) in (400, 422), (method, path, seen)
        assert seen.get("a body of another type", 415) == 415, (method, path, seen)
        assert seen.get("a one-value query given twice", 400) == 400, (method, path, seen)
        if "{" in path and method != "put" and (method, path) not in IN_THE_BODY:
            assert seen["an unknown id"] == 404, (method, path, seen)  # a PUT creates it
        walked += 1
    assert walked >= 40


def test_a_401_names_each_scheme_and_says_when_the_key_sent_is_not_valid(
    client: TestClient,
) -> None:
    missing = client.get("/api/v1/plugins")
    assert missing.status_code == 401 and assert_envelope(missing) == "unauthenticated"
    assert missing.headers.get_list("www-authenticate") == [
        'Bearer realm="plugyard"',
        'ApiKey realm="plugyard", header="X-API-Key"',
    ]
    for headers in ({"X-API-Key": "pyk_nope"}, {"Authorization": "Bearer pyk_nope"}):
        wrong = client.post("/api/v1/plugins/calculator/execute", json={}, headers=headers)
        assert wrong.status_code == 401 and assert_envelope(wrong) == "unauthenticated"
        bearer = wrong.headers.get_list("www-authenticate")[0]
        assert bearer == 'Bearer realm="plugyard", error="invalid_token"'


@pytest.mark.parametrize("path", ["/mcp", "/mcp/discovery"])
def test_the_mcp_mounts_refuse_with_the_envelope(client: TestClient, path: str) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for method in ("GET", "POST", "DELETE"):
        response = client.request(method, path, json=call if method == "POST" else None)
        assert response.status_code == 401 and assert_envelope(response) == "unauthenticated"
    for method in ("PUT", "PATCH", "HEAD"):
        response = client.request(method, path)
        assert response.status_code == 405, response.text
        assert response.headers["allow"] == "DELETE, GET, POST"
        if method != "HEAD":  # a HEAD answer has no body, only the headers of one
            assert assert_envelope(response) == "method_not_allowed"


def test_framework_refusals_use_the_envelope(client: TestClient, admin_key: str) -> None:
    keyed = {"X-API-Key": admin_key, "Content-Type": "application/json"}
    unknown = client.get("/api/v2/nothing")
    assert unknown.status_code == 404 and assert_envelope(unknown) == "route_not_found"
    for path in ("/openapi.json", "/docs", "/healthz"):
        wrong = client.post(path)
        assert wrong.status_code == 405 and assert_envelope(wrong) == "method_not_allowed"
    huge = client.post("/api/v1/plugins/calculator/execute", content=b" " * 70_000, headers=keyed)
    assert huge.status_code == 413 and assert_envelope(huge) == "request_too_large"


def test_a_failed_execute_answers_the_envelope_with_its_result(
    client: TestClient, admin_key: str
) -> None:
    keyed = {"X-API-Key": admin_key}
    cases = [
        ("nope", {}, "plugin_not_found"),
        ("calculator", {"operation": "nothing"}, "operation_not_found"),
        ("calculator", {"parameters": {"expression": 6}}, "invalid_parameters"),
        ("liar", {}, "output_validation_error"),
    ]
    for plugin, body, code in cases:
        response = client.post(f"/api/v1/plugins/{plugin}/execute", json=body, headers=keyed)
        assert assert_envelope(response) == code
        details = response.json()["error"]["details"]
        result = details["result"]
        assert result["status"] == "error" and result["error"]["code"] == code
        assert result["request_id"] == details["request_id"]
        assert "cost" in result


def test_a_call_that_does_not_fail_keeps_the_result_envelope(
    client: TestClient, admin_key: str
) -> None:
    keyed = {"X-API-Key": admin_key}
    body = {"parameters": {"expression": "6*7"}}
    done = client.post("/api/v1/plugins/calculator/execute", json=body, headers=keyed)
    assert done.status_code == 200 and done.json()["status"] == "success"
    assert "error" not in done.json()


def test_a_stream_refuses_with_the_envelope_before_it_starts_and_with_its_result_after(
    client: TestClient, admin_key: str
) -> None:
    url = "/api/v1/plugins/nope/execute/stream"
    refused = client.post(url, json={"parameters": 1}, headers={"X-API-Key": admin_key})
    assert refused.status_code == 400 and assert_envelope(refused) == "invalid_request"
    started = client.post(url, json={}, headers={"X-API-Key": admin_key})
    assert started.status_code == 200
    assert started.headers["content-type"].startswith("text/event-stream")
    lines = started.text.splitlines()
    at = lines.index("event: result")
    result = json.loads(lines[at + 1].removeprefix("data: "))
    assert result["status"] == "error" and result["error"]["code"] == "plugin_not_found"
