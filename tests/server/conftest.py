"""An app over a yard on a store file, with the test plugins, the external plugin
server (allowlisted on loopback) and the scripted fake model as its chat model; health
checks are driven by the tests, round by round."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from plugyard.llm.testing import ScriptedModel
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard
from runtimes.http.servers import Canary, PluginServer
from runtimes.offline import offline_resolution  # noqa: F401 - autouse fixture

PLUGINS = Path(__file__).with_name("plugins")


@pytest.fixture(scope="module")
def plugin_server() -> Iterator[PluginServer]:
    server = PluginServer().start()
    yield server
    server.stop()


@pytest.fixture
def canary() -> Iterator[Canary]:
    found = Canary()
    yield found
    found.close()


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedModel]:
    with ScriptedModel.running() as scripted:
        yield scripted


@pytest.fixture
def model(model_server: ScriptedModel) -> ScriptedModel:
    model_server.script()
    return model_server


def yard_settings(db: Path, server: PluginServer, model: ScriptedModel | None = None) -> Settings:
    return Settings(
        database=str(db),
        plugin_dirs=(PLUGINS,),
        outbound_allow=(server.allow, *((model.allow,) if model else ())),
        health_threshold=2,
        llm=model.spec if model else None,
    )


@pytest.fixture
def yard(tmp_path: Path, plugin_server: PluginServer, model: ScriptedModel) -> Iterator[Yard]:
    with Yard.from_settings(yard_settings(tmp_path / "yard.db", plugin_server, model)) as found:
        yield found


@pytest.fixture
def admin_key(yard: Yard) -> str:
    key = yard.keys.bootstrap_admin()
    assert key is not None
    return key


@pytest.fixture
def reader_key(yard: Yard) -> str:
    return yard.keys.create("reader", ("reader",))[1]


@pytest.fixture
def client(yard: Yard) -> Iterator[TestClient]:
    app = create_app(yard, ServerSettings(health_checks=False, max_body_bytes=64 * 1024))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def registration(server: PluginServer, plugin_id: str = "remote", **extra: object) -> dict:
    """A HomeClaw registration body for the test plugin server."""
    body: dict = {
        "plugin_id": plugin_id,
        "name": "Remote",
        "description": "Echoes and adds, over HTTP.",
        "health_check_url": f"{server.url}/health",
        "type": "http",
        "config": {"base_url": server.url, "timeout_sec": 2},
        "capabilities": [
            {"id": "echo", "name": "Echo", "description": "Echoes its parameters.",
             "parameters": [{"name": "text", "type": "string"}], "method": "POST",
             "path": "/homeclaw/run"},
            {"id": "add", "name": "Add", "description": "Adds two numbers.",
             "parameters": [{"name": "a", "type": "number"}, {"name": "b", "type": "number"}],
             "method": "POST", "path": "/homeclaw/run"},
            {"id": "hang", "name": "Hang", "description": "Never answers.", "parameters": [],
             "method": "POST", "path": "/hang"},
            {"id": "garbage", "name": "Garbage", "description": "Answers garbage.",
             "parameters": [], "method": "POST", "path": "/garbage"},
        ],
    }  # fmt: skip
    body.update(extra)
    return body
