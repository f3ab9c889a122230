"""Logging in with an API key: the cookie, wrong keys, forged posts, logging out."""

from __future__ import annotations

from fastapi.testclient import TestClient

from plugyard.yard import Yard

from .conftest import codes, csrf_of, signed_in


def test_a_page_without_a_session_sends_the_browser_to_the_login_page(app: object) -> None:
    client = TestClient(app, base_url="https://testserver")  # type: ignore[arg-type]
    reply = client.get("/console/approvals", follow_redirects=False)
    assert reply.status_code == 303
    assert reply.headers["location"] == "/console/login?next=/console/approvals"


def test_login_sets_a_secure_httponly_strict_cookie_that_is_not_the_key(
    app: object, keys: dict[str, str]
) -> None:
    client = TestClient(app, base_url="https://testserver")  # type: ignore[arg-type]
    page = client.get("/console/login")
    reply = client.post("/console/login", data={"csrf_token": csrf_of(page.text),
                        "key": keys["admin"], "next": "/console/feeds"},
                        follow_redirects=False)  # fmt: skip
    assert reply.status_code == 303 and reply.headers["location"] == "/console/feeds"
    cookie = next(c for c in reply.headers.get_list("set-cookie") if "plugyard-session" in c)
    lowered = cookie.lower()
    assert "secure" in lowered and "httponly" in lowered and "samesite=strict" in lowered
    assert keys["admin"] not in cookie
    assert client.get("/").status_code == 200


def test_a_wrong_key_is_refused_on_the_page(app: object) -> None:
    client = TestClient(app, base_url="https://testserver")  # type: ignore[arg-type]
    page = client.get("/console/login")
    reply = client.post("/console/login", data={"csrf_token": csrf_of(page.text),
                        "key": "pyk_000000000000_" + "x" * 43})  # fmt: skip
    assert reply.status_code == 401 and "unauthenticated" in codes(reply.text)


def test_a_login_post_without_its_token_is_refused(app: object, keys: dict[str, str]) -> None:
    client = TestClient(app, base_url="https://testserver")  # type: ignore[arg-type]
    reply = client.post("/console/login", data={"key": keys["admin"]})
    assert reply.status_code == 403 and "csrf_invalid" in codes(reply.text)


def test_an_offsite_next_is_ignored(app: object, keys: dict[str, str]) -> None:
    client = TestClient(app, base_url="https://testserver")  # type: ignore[arg-type]
    page = client.get("/console/login")
    reply = client.post("/console/login", data={"csrf_token": csrf_of(page.text),
                        "key": keys["admin"], "next": "//evil.example/"},
                        follow_redirects=False)  # fmt: skip
    assert reply.headers["location"] == "/"


def test_a_forged_post_without_the_session_token_changes_nothing(admin: TestClient) -> None:
    reply = admin.post("/console/admin/keys", data={"subject": "mallory", "roles": "admin"})
    assert reply.status_code == 403 and "csrf_invalid" in codes(reply.text)
    assert "mallory" not in admin.get("/console/admin/keys").text


def test_revoking_the_key_ends_its_sessions(app: object, yard: Yard, keys: dict[str, str]) -> None:
    client = signed_in(app, keys["clerk"])
    assert client.get("/").status_code == 200
    clerk_key = next(k for k in yard.keys.list() if k.subject == "clerk")
    yard.keys.revoke(clerk_key.id)
    reply = client.get("/", follow_redirects=False)
    assert reply.status_code == 303 and reply.headers["location"].startswith("/console/login")


def test_logout_closes_the_session(admin: TestClient) -> None:
    token = csrf_of(admin.get("/").text)
    reply = admin.post("/console/logout", data={"csrf_token": token}, follow_redirects=False)
    assert reply.status_code == 303
    assert admin.get("/", follow_redirects=False).status_code == 303


def test_plain_http_to_another_host_is_warned_about(app: object) -> None:
    client = TestClient(app, base_url="http://plugyard.example")  # type: ignore[arg-type]
    assert "insecure_transport" in codes(client.get("/console/login").text)
    local = TestClient(app, base_url="http://127.0.0.1:8000")  # type: ignore[arg-type]
    assert "insecure_transport" not in codes(local.get("/console/login").text)
