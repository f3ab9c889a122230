"""The MCP pins page: a tool whose definition changed waits there, and an admin approves it."""

from __future__ import annotations

from pathlib import Path

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard
from runtimes.mcp.conftest import stdio_manifest

from .conftest import csrf_of, signed_in


def test_a_changed_tool_waits_for_an_admin_then_is_approved(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    stdio_manifest(tmp_path / "plugins" / "tools", state)
    settings = Settings(database=str(tmp_path / "db.sqlite"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",), embedder="hashing")  # fmt: skip
    with Yard.from_settings(settings) as yard:  # the definitions seen now are the pins
        admin_key = yard.keys.bootstrap_admin()
        assert admin_key is not None
    (state / "variant").write_text("v2")  # echo changes while nobody is connected
    with Yard.from_settings(settings) as yard:
        app = create_app(yard, ServerSettings(health_checks=False))
        with signed_in(app, admin_key) as client:
            page = client.get("/console/admin/mcp").text
            assert 'data-tool="mcp-tools/echo"' in page
            done = client.post("/console/admin/mcp/mcp-tools/echo/approve",
                               data={"csrf_token": csrf_of(page)})  # fmt: skip
            assert done.status_code == 200
            assert 'data-tool="mcp-tools/echo"' not in done.text
