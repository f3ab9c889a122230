"""A yard with the bundled plugins and the console's test plugins (every Shu UI hint,
markup everywhere, a streaming counter, a mail action that needs approval), a policy, and
a client per subject signed in to the console the way a browser is."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

HERE = Path(__file__).parent
PLUGIN_DIRS = (HERE.parent / "server" / "plugins", HERE / "plugins")
POLICY = """
grants:
  - {to: "role:admin", plugin: "*", operation: "*", verb: "*", effect: allow}
  - {to: "role:clerk", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "role:clerk", plugin: mailer, operation: outbox, effect: allow}
  - {to: "role:clerk", plugin: hinted, effect: allow}
  - {to: "role:clerk", plugin: ticker, effect: allow}
  - {to: "role:clerk", plugin: evil, effect: allow}
"""
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def settings(db: str) -> Settings:
    return Settings(database=db, embedder="hashing", plugin_dirs=PLUGIN_DIRS)


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    with Yard.from_settings(settings(str(tmp_path / "console.db"))) as opened:
        yield opened


@pytest.fixture
def keys(yard: Yard) -> dict[str, str]:
    admin = yard.keys.bootstrap_admin()
    assert admin is not None
    yard.admin.load_policy(POLICY, by="admin")
    return {
        "admin": admin,
        "clerk": yard.keys.create("clerk", ("clerk",))[1],
        "reader": yard.keys.create("reader", ("reader",))[1],
    }


@pytest.fixture
def app(yard: Yard) -> object:
    return create_app(yard, ServerSettings(health_checks=False))


def csrf_of(html: str) -> str:
    found = _TOKEN.search(html)
    assert found is not None, "no CSRF field on the page"
    return found.group(1)


def signed_in(app: object, key: str) -> TestClient:
    """A client over https (the session cookie is Secure) that has logged in."""
    client = TestClient(app, base_url="https://testserver", raise_server_exceptions=False)  # type: ignore[arg-type]
    page = client.get("/console/login")
    reply = client.post("/console/login", data={"csrf_token": csrf_of(page.text), "key": key},
                        follow_redirects=False)  # fmt: skip
    assert reply.status_code == 303, reply.text
    return client


@pytest.fixture
def admin(app: object, keys: dict[str, str]) -> Iterator[TestClient]:
    with signed_in(app, keys["admin"]) as client:
        yield client


@pytest.fixture
def clerk(app: object, keys: dict[str, str]) -> Iterator[TestClient]:
    with signed_in(app, keys["clerk"]) as client:
        yield client


def codes(html: str) -> list[str]:
    """The stable codes a page shows (``data-code``)."""
    return re.findall(r'data-code="([^"]+)"', html)
