from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.yard import Settings, Yard

SERVER = Path(__file__).with_name("tool_server.py")


def stdio_manifest(folder: Path, state: Path, plugin_id: str = "mcp-tools") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text(
        f"id: {plugin_id}\nname: MCP tools\ndescription: Test tools served over MCP.\n"
        f"type: mcp\nconfig:\n  command: {sys.executable}\n  args: [{SERVER}, {state}]\n"
    )
    return folder


def http_manifest(folder: Path, url: str, plugin_id: str = "mcp-web") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text(
        f"id: {plugin_id}\nname: MCP web tools\ndescription: Tools over streamable HTTP.\n"
        f"type: mcp\nconfig:\n  transport: streamable-http\n  url: {url}\n"
    )
    return folder


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def yard(tmp_path: Path, state: Path) -> Iterator[Yard]:
    stdio_manifest(tmp_path / "plugins" / "tools", state)
    settings = Settings(
        database=str(tmp_path / "db.sqlite"),
        builtins=False,
        plugin_dirs=(tmp_path / "plugins",),
    )
    with Yard.from_settings(settings) as y:
        yield y


@pytest.fixture
def http_server(state: Path) -> Iterator[str]:
    """The test server over streamable HTTP on a loopback port; answers its URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(state), "--http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()
