"""The model over HTTP: a key needs the policy's model right on every route that reaches
it, its requests are rated per subject (429 with Retry-After) and capped as ask's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from plugyard.llm.testing import Reply, ScriptedModel
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Yard
from runtimes.http.servers import PluginServer

from .conftest import yard_settings


@pytest.fixture
def slow_yard(tmp_path: Path, plugin_server: PluginServer, model: ScriptedModel) -> Iterator[Yard]:
    settings = replace(yard_settings(tmp_path / "y.db", plugin_server, model),
                       model_rate_per_minute=2)  # fmt: skip
    with Yard.from_settings(settings) as found:
        yield found


@pytest.fixture
def http(slow_yard: Yard) -> Iterator[TestClient]:
    app = create_app(slow_yard, ServerSettings(health_checks=False, max_body_bytes=2 << 20))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def chat(text: str) -> dict[str, Any]:
    return {"model": "plugyard", "messages": [{"role": "user", "content": text}]}


def test_a_key_without_the_model_right_reaches_no_model_route(
    http: TestClient, slow_yard: Yard, model: ScriptedModel
) -> None:
    key = slow_yard.keys.create("nobody", ())[1]
    listed = http.get("/v1/models", headers=bearer(key))
    assert listed.status_code == 403 and listed.json()["error"]["code"] == "permission_denied"
    done = http.post("/v1/chat/completions", json=chat("hello"), headers=bearer(key))
    assert done.status_code == 403 and done.json()["error"]["code"] == "permission_denied"
    asked = http.post("/api/v1/ask", json={"message": "6*7"}, headers={"X-API-Key": key})
    assert asked.json()["error"]["code"] == "permission_denied"
    reasoned = http.post("/api/v1/reason", json={"prompt": "6*7?"}, headers={"X-API-Key": key})
    assert reasoned.status_code == 403
    assert reasoned.json()["error"]["message"]["error"] == "permission_denied"
    assert model.requests == []


def test_a_megabyte_message_is_refused_with_its_limit_and_never_sent(
    http: TestClient, slow_yard: Yard, model: ScriptedModel
) -> None:
    key = slow_yard.keys.create("ann", ("reader",))[1]
    done = http.post("/v1/chat/completions", json=chat("x" * 1_000_000), headers=bearer(key))
    assert done.status_code == 413
    error = done.json()["error"]
    assert error["code"] == "input_too_large" and error["param"] == "messages.0.content"
    assert model.requests == []


def test_model_requests_are_rated_per_subject_with_retry_after(
    http: TestClient, slow_yard: Yard, model: ScriptedModel
) -> None:
    ann = slow_yard.keys.create("ann", ("reader",))[1]
    model.script(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    for _ in range(2):
        assert http.post("/v1/chat/completions", json=chat("hi"), headers=bearer(ann)).is_success
    over = http.post("/v1/chat/completions", json=chat("hi"), headers=bearer(ann))
    assert over.status_code == 429 and over.json()["error"]["code"] == "rate_limited"
    assert int(over.headers["Retry-After"]) >= 1
    asked = http.post("/api/v1/ask", json={"message": "6*7"}, headers={"X-API-Key": ann})
    assert asked.json()["error"]["code"] == "rate_limited"
    assert asked.json()["error"]["details"]["retry_after_s"] >= 1
    bob = slow_yard.keys.create("bob", ("reader",))[1]
    assert http.post("/v1/chat/completions", json=chat("hi"), headers=bearer(bob)).is_success
    assert len(model.requests) == 3
