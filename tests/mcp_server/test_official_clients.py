"""plugyard's MCP server as the official Node clients see it — the TypeScript SDK's
``Client`` and the Inspector CLI in ``--strict`` mode — over stdio (``plugyard mcp``) and
streamable HTTP (``/mcp`` of a real server on loopback).

The SDK validates each structured result against the tool's output schema and throws
``-32602`` when it does not fit; none of these calls may end that way, and a failing call
must reach the user as its error text.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.mcp_server import McpFront
from plugyard.mcp_server.front import RECEIPT_META
from plugyard.mcp_server.results import ERROR_META
from plugyard.server import ServerSettings, create_app
from plugyard.types import Caller
from plugyard.yard import Yard

from .official import inspector, plugyard_mcp, require_node_clients, sdk_session, server_env
from .serving import on_loopback

SIX_BY_SEVEN = {"name": "calculator", "arguments": {"expression": "6*7"}}
ONE_BY_ZERO = {"name": "calculator", "arguments": {"expression": "1/0"}}
CANONICAL_SERVER = Path(__file__).with_name("canonical_schemas_server.py")


@pytest.fixture(autouse=True)
def node_clients() -> None:
    require_node_clients()


@pytest.fixture
def base_url(yard: Yard) -> Iterator[str]:
    with on_loopback(create_app(yard, ServerSettings(health_checks=False))) as base:
        yield base


def stdio(env: dict[str, str], *options: str) -> dict[str, Any]:
    command, *args = plugyard_mcp(*options)
    return {"command": command, "args": args, "env": env}


def answers(session: Any) -> list[dict[str, Any]]:
    """Each call's result; a call the SDK refused fails the test with what it threw."""
    for call in session["calls"]:
        assert "thrown" not in call, call["thrown"]
    return [call["result"] for call in session["calls"]]


def assert_failed_with_text(result: dict[str, Any], code: str) -> None:
    """The user reads ``code: message``; no structured content pretends to be a result."""
    assert result["isError"] is True and "structuredContent" not in result
    error = result["_meta"][ERROR_META]
    assert error["code"] == code
    assert result["content"] == [{"type": "text", "text": f"{code}: {error['message']}"}]


def pending_receipt(yard: Yard, subject: str) -> str:
    """A receipt for ``subject``'s ``6*7``, approved by alice."""
    caller = Caller(subject)
    answer = asyncio.run(McpFront(yard).call_tool(caller, "calculator", {"expression": "6*7"}))
    pending = answer["structuredContent"]
    yard.admin.decide(pending["action_id"], Caller("alice", ("boss",)), True)
    return str(pending["receipt"])


# ---------------------------------------------------------------- the TypeScript SDK


def test_the_sdk_over_stdio_gets_a_result_and_a_failure_it_can_show(env: dict[str, str]) -> None:
    session = sdk_session(stdio(env, "--subject", "alice"), [SIX_BY_SEVEN, ONE_BY_ZERO])
    assert len(session["tools"]) >= 28
    assert all("outputSchema" in tool for tool in session["tools"])
    done, failed = answers(session)
    assert done["isError"] is False and done["structuredContent"]["result"] == 42
    assert_failed_with_text(failed, "invalid_parameters")  # the calculator's code for 1/0


def test_the_sdk_accepts_a_pending_approval_and_the_approved_result(
    env: dict[str, str], yard: Yard
) -> None:
    receipt = pending_receipt(yard, "bob")
    again = {**SIX_BY_SEVEN, "_meta": {RECEIPT_META: receipt}}
    session = sdk_session(stdio(env, "--subject", "bob"), [SIX_BY_SEVEN, again])
    assert [tool["name"] for tool in session["tools"]] == ["calculator", "ask", "confirm"]
    pending, done = answers(session)
    assert pending["isError"] is False
    assert pending["structuredContent"]["status"] == "pending_approval"
    assert pending["structuredContent"]["receipt"] in pending["content"][0]["text"]
    assert done["isError"] is False and done["structuredContent"]["result"] == 42


def test_the_sdk_in_discovery_mode_calls_through_the_call_tool(env: dict[str, str]) -> None:
    call = {
        "name": "call",
        "arguments": {"plugin": "calculator", "parameters": {"expression": "1/0"}},
    }
    found = {"name": "search", "arguments": {"query": "arithmetic"}}
    session = sdk_session(stdio(env, "--subject", "alice", "--mode", "discovery"), [found, call])
    assert [tool["name"] for tool in session["tools"]] == ["search", "call", "ask", "confirm"]
    search, failed = answers(session)
    assert "calculator" in [m["plugin"] for m in search["structuredContent"]["matches"]]
    assert_failed_with_text(failed, "invalid_parameters")


def test_the_sdk_over_streamable_http_follows_the_api_key(yard: Yard, base_url: str) -> None:
    alice = yard.keys.create("alice", ("boss",))[1]
    eve = yard.keys.create("eve", ("guest",))[1]
    server = {"url": f"{base_url}/mcp", "headers": {"X-API-Key": alice}}
    session = sdk_session(server, [SIX_BY_SEVEN, ONE_BY_ZERO])
    done, failed = answers(session)
    assert done["structuredContent"]["result"] == 42
    assert_failed_with_text(failed, "invalid_parameters")
    denied = sdk_session({**server, "headers": {"Authorization": f"Bearer {eve}"}}, [SIX_BY_SEVEN])
    assert denied["tools"] == []
    assert_failed_with_text(answers(denied)[0], "permission_denied")


def test_the_sdk_over_streamable_http_accepts_a_pending_approval(yard: Yard, base_url: str) -> None:
    bob = yard.keys.create("bob", ("clerk",))[1]
    receipt = pending_receipt(yard, "bob")
    again = {**SIX_BY_SEVEN, "_meta": {RECEIPT_META: receipt}}
    server = {"url": f"{base_url}/mcp", "headers": {"X-API-Key": bob}}
    pending, done = answers(sdk_session(server, [SIX_BY_SEVEN, again]))
    assert pending["structuredContent"]["status"] == "pending_approval"
    assert done["structuredContent"]["result"] == 42


# ---------------------------------------------------------------- the Inspector CLI


def strict_listing(*target: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``tools/list`` under ``--strict``: the result and the findings, which must not
    include an error (the Inspector's exit code 6)."""
    done = inspector("--method", "tools/list", "--strict", "--format", "json", *target, env=env)
    assert done.returncode == 0, done.stderr
    listing: dict[str, Any] = json.loads(done.stdout)
    return listing


def warnings_of(listing: dict[str, Any]) -> list[str]:
    return [
        f"{tool['toolName']}: {finding['schema']}.{finding['path']} ({finding['rule']})"
        for tool in listing.get("schemaFindings", [])
        for finding in tool["findings"]
    ]


def test_the_inspector_in_strict_mode_reports_nothing_over_stdio(env: dict[str, str]) -> None:
    listing = strict_listing("--", *plugyard_mcp("--subject", "alice"), env=server_env(env))
    assert len(listing["result"]["tools"]) >= 28
    assert warnings_of(listing) == []
    bob = strict_listing("--", *plugyard_mcp("--subject", "bob"), env=server_env(env))
    assert [t["name"] for t in bob["result"]["tools"]] == ["calculator", "ask", "confirm"]
    assert warnings_of(bob) == []  # the schema that admits a pending approval too
    discovery = strict_listing("--", *plugyard_mcp("--mode", "discovery"), env=server_env(env))
    assert warnings_of(discovery) == []


def test_the_inspector_in_strict_mode_reports_nothing_over_http(yard: Yard, base_url: str) -> None:
    alice = yard.keys.create("alice", ("boss",))[1]
    for path in ("/mcp", "/mcp/discovery"):
        url = f"{base_url}{path}"
        target = ("--server-url", url, "--transport", "http", "--header", f"X-API-Key: {alice}")
        listing = strict_listing(*target)
        assert listing["result"]["tools"] and warnings_of(listing) == []


def test_the_inspector_reports_the_canonical_schemas_that_the_export_rewrites(
    env: dict[str, str],
) -> None:
    """The same check against the descriptors' own schemas does find what it looks for,
    so its silence above is the rewrite's doing."""
    command = [sys.executable, str(CANONICAL_SERVER), "alice"]
    listing = strict_listing("--", *command, env=server_env(env))
    rules = {finding["rule"] for t in listing["schemaFindings"] for finding in t["findings"]}
    assert rules == {"type-union", "untyped-schema"}


def test_the_inspector_shows_a_failing_call_as_the_tools_error(env: dict[str, str]) -> None:
    call = ("--method", "tools/call", "--tool-name", "calculator", "--tool-arg", "expression=1/0")
    alice = plugyard_mcp("--subject", "alice")
    done = inspector(*call, "--format", "json", "--", *alice, env=server_env(env))
    assert json.loads(done.stderr.splitlines()[-1])["error"]["code"] == "tool_is_error"
    assert_failed_with_text(json.loads(done.stdout)["result"], "invalid_parameters")
