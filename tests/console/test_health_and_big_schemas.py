"""An external plugin's health history on its page; schemas too big or recursive for a
form still give a working page at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from plugyard.manifest.model import Operation
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard
from runtimes.http.servers import PluginServer
from server.conftest import registration

from .conftest import PLUGIN_DIRS, codes, csrf_of, signed_in


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Yard, PluginServer]]:
    server = PluginServer().start()
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing",
                        plugin_dirs=PLUGIN_DIRS, outbound_allow=(server.allow,))  # fmt: skip
    try:
        with Yard.from_settings(settings) as yard:
            yield yard, server
    finally:
        server.stop()


def test_an_external_plugins_page_shows_its_health_history(
    served: tuple[Yard, PluginServer],
) -> None:
    yard, server = served
    key = yard.keys.bootstrap_admin()
    assert key is not None
    app = create_app(yard, ServerSettings(health_checks=False))
    with signed_in(app, key) as client:
        page = client.get("/console/admin/plugins").text
        body = __import__("json").dumps(registration(server))
        done = client.post("/console/admin/plugins", data={"csrf_token": csrf_of(page),
                           "body": body})  # fmt: skip
        assert 'data-registered="remote"' in done.text
        assert yard.health is not None

        async def rounds() -> None:
            await yard.outbound.start()
            try:
                for _ in range(3):
                    await yard.health.check_once()  # type: ignore[union-attr]
            finally:
                await yard.outbound.aclose()

        asyncio.run(rounds())
        shown = client.get("/console/plugins/remote").text
        assert shown.count('<span class="badge ok">ok</span>') == 3
        assert "State: <strong>healthy</strong>" in shown


def big(yard: Yard, plugin_id: str, parameters: dict) -> None:  # type: ignore[type-arg]
    held = yard.registry.find("hinted")
    assert held is not None
    op = Operation(id="configure", parameters=parameters)
    descriptor = held.descriptor.model_copy(update={"id": plugin_id, "operations": (op,),
                                                    "op_auth": {}})  # fmt: skip
    yard.registry.register(replace(held, descriptor=descriptor))


def test_a_thousand_fields_and_a_cycle_give_a_page_at_once(admin: TestClient, yard: Yard) -> None:
    wide_schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(1000)},
    }
    node = {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}
    loop_schema = {
        "type": "object",
        "$defs": {"n": node},
        "properties": {"head": {"$ref": "#/$defs/n"}},
    }
    big(yard, "wide", wide_schema)
    big(yard, "loop", loop_schema)
    started = time.perf_counter()
    wide = admin.get("/console/plugins/wide/run/configure")
    loop = admin.get("/console/plugins/loop/run/configure")
    assert time.perf_counter() - started < 5
    assert wide.status_code == 200 and 'name="__json__"' in wide.text
    assert loop.status_code == 200 and "a recursive schema" in loop.text
    bad = admin.post("/console/plugins/wide/run/configure",
                     data={"csrf_token": csrf_of(wide.text), "__json__": "[1, 2"})  # fmt: skip
    assert bad.status_code == 422 and "invalid_parameters" in codes(bad.text)
    assert admin.get("/").status_code == 200  # the server keeps serving
