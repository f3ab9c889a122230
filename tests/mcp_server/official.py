"""The official Node clients of MCP — the TypeScript SDK and the Inspector CLI — as
``scripts/mcp-clients.sh`` installs them from ``tests/clients/node`` (its lock file pins them).

Where they are not installed (no npm on a developer's machine) their tests are skipped;
on CI (``CI=true``) that is a failure, so the check never silently disappears.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from plugyard.store.testing import on_ci

NODE_DIR = Path(__file__).parents[1] / "clients" / "node"
INSPECTOR = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
ENTRY = "from plugyard.cli.main import main; main()"
TIMEOUT_S = 120


def require_node_clients() -> None:
    missing = [str(p) for p in (INSPECTOR, NODE_DIR / "node_modules" / "@modelcontextprotocol"
                                / "sdk") if not p.exists()]  # fmt: skip
    if shutil.which("node") is None:
        missing.append("node")
    if missing:
        reason = f"the official MCP clients are not installed ({', '.join(missing)})"
        if on_ci():
            pytest.fail(f"{reason}: scripts/mcp-clients.sh installs them with npm")
        pytest.skip(reason)


def plugyard_mcp(*options: str) -> list[str]:
    """The command line of ``plugyard mcp`` with the Python running the tests."""
    return [sys.executable, "-c", ENTRY, "mcp", *options]


def sdk_session(server: Mapping[str, Any], calls: Sequence[Mapping[str, Any]]) -> Any:
    """List the tools, then make ``calls``, with the TypeScript SDK's ``Client``
    (``sdk_client.mjs``): ``{"tools": [...], "calls": [{"result"} | {"thrown"}]}``."""
    require_node_clients()
    plan = json.dumps({"server": server, "calls": list(calls)})
    done = subprocess.run(["node", str(NODE_DIR / "sdk_client.mjs"), plan], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def inspector(
    *arguments: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the Inspector CLI (``mcp-inspector --cli …``); ``env`` is what a stdio server
    it starts gets (the Inspector passes only a minimal environment otherwise)."""
    require_node_clients()
    options = [part for item in (env or {}).items() for part in ("-e", "=".join(item))]
    return subprocess.run([str(INSPECTOR), "--cli", *options, *arguments], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a ``plugyard mcp`` started by a Node client needs of the test's environment."""
    wanted = {k: v for k, v in env.items() if k.startswith("PLUGYARD_")}
    if "PYTHONPATH" in env:
        wanted["PYTHONPATH"] = env["PYTHONPATH"]
    return wanted


def strict_findings(stderr: str) -> list[str]:
    """The findings the Inspector's ``--strict`` printed: one line per warning or error."""
    return [line for line in stderr.splitlines() if line.startswith(("Warning:", "Error:"))]
