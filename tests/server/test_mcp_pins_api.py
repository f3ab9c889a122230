"""MCP tool pins over HTTP: an admin sees a changed tool and re-approves it."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard
from runtimes.mcp.conftest import stdio_manifest


def test_an_admin_lists_pins_and_re_approves_a_changed_tool(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    stdio_manifest(tmp_path / "plugins" / "tools", state)
    settings = Settings(database=str(tmp_path / "db.sqlite"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",))  # fmt: skip
    with Yard.from_settings(settings) as yard:  # the definitions seen now are the pins
        admin_key = yard.keys.bootstrap_admin()
        reader_key = yard.keys.create("reader", ("reader",))[1]
        assert admin_key is not None
    (state / "variant").write_text("v2")  # echo changes while nobody is connected
    with Yard.from_settings(settings) as yard:
        app = create_app(yard, ServerSettings(health_checks=False))
        with TestClient(app) as client:
            admin, reader = {"X-API-Key": admin_key}, {"X-API-Key": reader_key}
            assert client.get("/api/v1/mcp/pins", headers=reader).status_code == 403
            pins = client.get("/api/v1/mcp/pins?plugin_id=mcp-tools", headers=admin).json()
            changed = {p["tool"] for p in pins if p["changed"]}
            assert "echo" in changed
            approved = client.post("/api/v1/mcp/pins/mcp-tools/echo/approve", headers=admin)
            assert approved.status_code == 200 and approved.json()["changed"] is False
            unknown = client.post("/api/v1/mcp/pins/mcp-tools/nope/approve", headers=admin)
            assert unknown.status_code == 404
            assert unknown.json()["error"]["message"]["error"] == "operation_not_found"
