"""Streamable-HTTP MCP servers: reached only through the outbound guard."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plugyard.yard import Settings, Yard

from .conftest import http_manifest


def test_a_loopback_server_is_refused_unless_allowlisted(tmp_path: Path, http_server: str) -> None:
    http_manifest(tmp_path / "plugins" / "web", http_server)
    base = Settings(database=str(tmp_path / "db.sqlite"), builtins=False,
                    plugin_dirs=(tmp_path / "plugins",), governed=False)  # fmt: skip
    with Yard.from_settings(base) as yard:
        refused = yard.registry.require("mcp-web")
        assert not refused.available
        assert "outbound connection refused" in (refused.unavailable_reason or "")
    port = http_server.rsplit(":", 1)[1].split("/")[0]
    allowed = Settings(
        database=str(tmp_path / "db2.sqlite"),
        builtins=False,
        governed=False,
        plugin_dirs=(tmp_path / "plugins",),
        outbound_allow=(f"127.0.0.1:{port}",),
    )
    with Yard.from_settings(allowed) as yard:
        assert yard.registry.require("mcp-web").available

        async def work() -> object:
            first = await yard.call("mcp-web", "add", {"a": 4, "b": 5})
            second = await yard.call("mcp-web", "echo", {"text": "web"})
            await yard.runtimes["mcp"].aclose()  # type: ignore[attr-defined]
            return first.data, second.data["text"]

        assert asyncio.run(work()) == ({"sum": 9}, "web")
