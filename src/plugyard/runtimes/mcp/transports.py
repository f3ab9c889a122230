"""How a connection to an MCP server is opened: a stdio child (sandboxed when the plugin
is untrusted) or a streamable-HTTP endpoint reached through the outbound guard."""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from plugyard.manifest.model import McpRuntime
from plugyard.runtimes.base import ErrorInfo, Target
from plugyard.runtimes.http.runtime import url_problem
from plugyard.runtimes.mcp.connection import Opener, Streams
from plugyard.runtimes.mcp.guarded_http import guarded_client
from plugyard.runtimes.outbound.guard import OutboundGuard

_SANDBOX = "plugyard.runtimes.sandbox"
_stderr: TextIO | None = None


def spec_problem(spec: McpRuntime) -> str | None:
    """Why the manifest's transport cannot be used (text only, nothing is started)."""
    if spec.transport == "stdio":
        return None if spec.command else "an stdio MCP server needs a command"
    return url_problem(spec.url)


def opener_for(target: Target, spec: McpRuntime, guard: OutboundGuard) -> Opener | ErrorInfo:
    if spec.transport == "stdio":
        return _stdio(target, spec)
    assert spec.url is not None
    url = spec.url
    headers = spec.config.get("headers")
    extra = {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else None

    @contextlib.asynccontextmanager
    async def http() -> AsyncIterator[Streams]:
        async with (
            guarded_client(guard, headers=extra) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]

    return http


def _stdio(target: Target, spec: McpRuntime) -> Opener | ErrorInfo:
    folder = _folder(target.location)
    command = _resolve(spec.command or "", folder)
    if command is None:
        missing = f"the MCP server command {spec.command!r} is not found"
        return ErrorInfo("plugin_unavailable", missing)
    argv = [command, *spec.args]
    env = dict(spec.env)
    if target.trust != "trusted":
        wrapped = _sandboxed(argv, folder, env)
        if isinstance(wrapped, ErrorInfo):
            return wrapped
        argv = wrapped
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env=env, cwd=str(folder) if folder else None
    )
    return lambda: stdio_client(params, errlog=_errlog())


def _sandboxed(argv: list[str], folder: Path | None, env: dict[str, str]) -> list[str] | ErrorInfo:
    """``argv`` under bubblewrap; untrusted servers never run without it."""
    try:
        sandbox: Any = importlib.import_module(_SANDBOX)
    except ImportError:
        return ErrorInfo("sandbox_unavailable", "no sandbox module: untrusted servers cannot run")
    reason = sandbox.unavailable_reason()
    if reason is not None:
        return ErrorInfo("sandbox_unavailable", f"the sandbox is unavailable: {reason}")
    if folder is None:
        return ErrorInfo("plugin_unavailable", "an untrusted MCP server needs its own folder")
    wrapped = sandbox.sandboxed(argv, folder=str(folder), env=env)
    return [str(a) for a in wrapped]


def _folder(location: str | None) -> Path | None:
    if location is None:
        return None
    path = Path(location)
    return path.parent if path.is_file() else path if path.is_dir() else None


def _resolve(command: str, folder: Path | None) -> str | None:
    if not command:
        return None
    if os.sep in command:
        path = Path(command)
        if not path.is_absolute() and folder is not None:
            path = folder / path
        # abspath, not resolve(): a virtualenv's python is a symlink that must stay one.
        return os.path.abspath(path) if path.is_file() else None
    return shutil.which(command)


def _errlog() -> TextIO:
    # The server's stderr is its own business; it must not fill a pipe nobody reads.
    global _stderr
    if _stderr is None:
        _stderr = open(os.devnull, "w")  # noqa: SIM115 - kept for the process's life
    return _stderr
