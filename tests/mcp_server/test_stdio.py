"""``plugyard mcp`` over stdio, driven by the official SDK's client and by a client
written against the protocol alone (JSON-RPC lines over the pipes)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import mcp.types as mt
from mcp import ClientSession, StdioServerParameters, stdio_client

from plugyard.mcp_server.front import RECEIPT_META
from plugyard.types import Caller
from plugyard.yard import Settings, Yard

from .conftest import calls_audited, error_code

ENTRY = "from plugyard.cli.main import main; main()"


def argv(*options: str) -> list[str]:
    return [sys.executable, "-c", ENTRY, "mcp", *options]


def test_the_sdk_client_lists_calls_and_completes_an_approval(env: dict[str, str]) -> None:
    async def work() -> tuple[list[str], Any, Any]:
        params = StdioServerParameters(command=argv()[0], args=argv("--subject", "bob")[1:],
                                       env=env)  # fmt: skip
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            pending = await session.call_tool("calculator", {"expression": "6*7"})
            data = pending.structured_content or {}
            with Yard.from_settings(Settings.from_env()) as yard:
                yard.admin.decide(data["action_id"], Caller("alice", ("boss",)), True)
            done = await session.call_tool(
                "calculator", {"expression": "6*7"}, meta={RECEIPT_META: data["receipt"]}
            )
            return names, pending, done

    names, pending, done = asyncio.run(work())
    assert names == ["calculator", "ask", "confirm"]
    assert pending.structured_content["status"] == "pending_approval"
    assert not done.is_error and done.structured_content["result"] == 42
    with Yard.from_settings(Settings.from_env()) as yard:
        assert calls_audited(yard, "bob") == ["pending_approval", "success"]


def test_discovery_mode_over_the_sdk_client(env: dict[str, str]) -> None:
    async def work() -> tuple[list[str], mt.CallToolResult]:
        args = argv("--subject", "alice", "--mode", "discovery")
        params = StdioServerParameters(command=args[0], args=args[1:], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            done = await session.call_tool(
                "call", {"plugin": "calculator", "parameters": {"expression": "9-2"}}
            )
            return names, done

    names, done = asyncio.run(work())
    assert names == ["search", "call", "ask", "confirm"]
    assert done.structured_content["result"] == 7


class RawClient:
    """JSON-RPC 2.0 over newline-delimited pipes, nothing else."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed its stdout"
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply


def test_a_protocol_only_client_initializes_lists_and_calls(env: dict[str, str]) -> None:
    process = subprocess.Popen(argv("--subject", "alice"), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=env)  # fmt: skip
    try:
        client = RawClient(process)
        init = client.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        })  # fmt: skip
        assert init["result"]["serverInfo"]["name"] == "plugyard"
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = client.request("tools/list")["result"]["tools"]
        assert "calculator" in {t["name"] for t in tools}
        done = client.request(
            "tools/call", {"name": "calculator", "arguments": {"expression": "2**10"}}
        )["result"]
        assert done["isError"] is False and done["structuredContent"]["result"] == 1024
        denied = client.request("tools/call", {"name": "nope", "arguments": {}})["result"]
        assert error_code(denied) == "operation_not_found"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=20)
    with Yard.from_settings(Settings.from_env()) as yard:
        assert calls_audited(yard, "alice") == ["success"]


def test_an_api_key_sets_the_caller_and_a_bad_one_is_refused(env: dict[str, str]) -> None:
    with Yard.from_settings(Settings.from_env()) as yard:
        key = yard.keys.create("eve", ("guest",))[1]
    bad = subprocess.run(argv("--api-key", "nope"), env=env, capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert bad.returncode == 2
    process = subprocess.Popen(argv("--api-key", key), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=env)  # fmt: skip
    try:
        client = RawClient(process)
        client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "raw", "version": "0"}})  # fmt: skip
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert client.request("tools/list")["result"]["tools"] == []
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=20)
