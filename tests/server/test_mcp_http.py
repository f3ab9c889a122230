"""``/mcp`` and ``/mcp/discovery`` on the REST server: streamable HTTP on a real loopback
socket, the official SDK's client, the caller taken from the API key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcp_server.serving import on_loopback
from plugyard.mcp_server.front import RECEIPT_META
from plugyard.mcp_server.results import ERROR_META
from plugyard.server import ServerSettings, create_app
from plugyard.types import Caller
from plugyard.yard import Settings, Yard

POLICY = """
subjects: {bob: {roles: [clerk]}, alice: {roles: [boss]}, eve: {roles: [guest]}}
grants:
  - {to: "role:clerk", plugin: calculator, effect: allow_with_approval}
  - {to: "role:boss", plugin: "*", verb: approve, effect: allow}
  - {to: "role:boss", plugin: "*", effect: allow}
"""


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Yard]]:
    monkeypatch.setenv("PLUGYARD_AUDIT_KEY", "ab" * 32)
    monkeypatch.setenv("PLUGYARD_SECRETS_KEY", "cd" * 32)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = Settings(database=str(tmp_path / "yard.db"), policy_file=policy, embedder="hashing")
    with Yard.from_settings(settings) as yard:
        app = create_app(yard, ServerSettings(health_checks=False))
        with on_loopback(app) as base:
            yield base, yard


async def _session_run(url: str, key: str, steps: Any) -> Any:
    async with (
        httpx2.AsyncClient(headers={"X-API-Key": key}) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await steps(session)


def test_a_request_without_a_valid_key_is_401_with_the_error_envelope(
    served: tuple[str, Yard],
) -> None:
    base, _ = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply = httpx.post(f"{base}/mcp", json=body)
    error = reply.json()["error"]
    assert reply.status_code == 401 and error["message"]["error"] == "unauthenticated"
    assert error["code"] == "HTTP_401" and error["error_id"].startswith("ERR-")
    schemes = [c.split(" ", 1)[0] for c in reply.headers.get_list("www-authenticate")]
    assert schemes == ["Bearer", "ApiKey"]
    reply = httpx.post(f"{base}/mcp", json=body, headers={"X-API-Key": "pk_nope"})
    assert reply.status_code == 401
    assert 'error="invalid_token"' in reply.headers.get_list("www-authenticate")[0]


def test_tools_follow_the_keys_subject_and_an_approval_completes(
    served: tuple[str, Yard],
) -> None:
    base, yard = served
    bob = yard.keys.create("bob", ("clerk",))[1]
    eve = yard.keys.create("eve", ("guest",))[1]

    async def as_eve(session: ClientSession) -> Any:
        tools = (await session.list_tools()).tools
        denied = await session.call_tool("calculator", {"expression": "1+1"})
        return tools, denied

    tools, denied = asyncio.run(_session_run(f"{base}/mcp", eve, as_eve))
    assert tools == []
    assert denied.is_error and denied.structured_content is None
    assert denied.meta is not None and denied.meta[ERROR_META]["code"] == "permission_denied"

    async def as_bob(session: ClientSession) -> Any:
        names = [t.name for t in (await session.list_tools()).tools]
        pending = (await session.call_tool("calculator", {"expression": "6*7"})).structured_content
        yard.admin.decide(pending["action_id"], Caller("alice", ("boss",)), True)
        done = await session.call_tool("calculator", {"expression": "6*7"},
                                       meta={RECEIPT_META: pending["receipt"]})  # fmt: skip
        return names, pending, done

    names, pending, done = asyncio.run(_session_run(f"{base}/mcp", bob, as_bob))
    assert names == ["calculator", "ask", "confirm"] and pending["status"] == "pending_approval"
    assert done.structured_content["result"] == 42
    calls = [(r.subject, r.status) for r in yard.admin.tail(100) if r.kind == "call"]
    assert calls == [("eve", "error"), ("bob", "pending_approval"), ("bob", "success")]


def test_discovery_endpoint_shows_its_three_tools(served: tuple[str, Yard]) -> None:
    base, yard = served
    alice = yard.keys.create("alice", ("boss",))[1]

    async def steps(session: ClientSession) -> Any:
        names = [t.name for t in (await session.list_tools()).tools]
        found = await session.call_tool("search", {"query": "arithmetic expression", "k": 3})
        return names, found.structured_content

    names, found = asyncio.run(_session_run(f"{base}/mcp/discovery", alice, steps))
    assert names == ["search", "call", "ask", "confirm"]
    assert "calculator" in [m["plugin"] for m in found["matches"]]
