"""The MCP ``ask`` tool: the routing flow under the MCP caller's identity, with the
scripted fake as the yard's model — in process, over stdio with the Python SDK's client,
and with the official TypeScript SDK, which checks the answer against the tool's
``outputSchema``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from plugyard.llm.testing import Reply, ScriptedModel
from plugyard.mcp_server import McpFront
from plugyard.mcp_server.ask import ASK_TOOL
from plugyard.types import Caller
from plugyard.yard import Yard

from .conftest import calls_audited, error_code
from .official import plugyard_mcp, sdk_session

SIX_BY_SEVEN = Reply.tool_call("calculator", {"expression": "6*7"})
QUESTION = {"message": "calculate 6*7 with the calculator"}
BOB, ALICE, EVE = Caller("bob"), Caller("alice"), Caller("eve")


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedModel]:
    with ScriptedModel.running() as model:
        yield model


@pytest.fixture
def env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        scripted: ScriptedModel) -> dict[str, str]:  # fmt: skip
    """The conftest's environment with the scripted fake as the yard's model."""
    scripted.script()
    values = {"PLUGYARD_LLM": scripted.spec, "PLUGYARD_OUTBOUND_ALLOW": scripted.allow}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {**env, **values}


def ask(yard: Yard, caller: Caller, args: dict[str, Any], mode: str = "tools") -> Any:
    front = McpFront(yard, "discovery" if mode == "discovery" else "tools")
    return asyncio.run(front.call_tool(caller, "ask", args))


@pytest.mark.parametrize("mode", ["tools", "discovery"])
def test_ask_answers_with_structured_content_that_fits_its_schema(
    yard: Yard, scripted: ScriptedModel, mode: str
) -> None:
    scripted.script(SIX_BY_SEVEN)
    result = ask(yard, ALICE, QUESTION, mode)
    assert result["isError"] is False, result
    answer = result["structuredContent"]
    assert answer["status"] == "answered" and answer["data"]["result"] == 42
    assert jsonschema_rs.is_valid(ASK_TOOL["outputSchema"], answer)
    assert result["content"] == [{"type": "text", "text": answer["text"]}]
    assert result["_meta"]["io.plugyard/status"] == "answered"
    assert calls_audited(yard, "alice") == ["success"]


def test_ask_calls_with_the_callers_rights_and_approvals(
    yard: Yard, scripted: ScriptedModel
) -> None:
    scripted.script(SIX_BY_SEVEN)
    result = ask(yard, BOB, QUESTION)  # bob's calculator needs an approval
    answer = result["structuredContent"]
    assert answer["status"] == "pending_approval" and answer["pending"]["receipt"]
    assert jsonschema_rs.is_valid(ASK_TOOL["outputSchema"], answer)
    assert calls_audited(yard, "bob") == ["pending_approval"]
    scripted.script(SIX_BY_SEVEN)
    # eve may call nothing, the model included: refused before it is asked
    assert error_code(ask(yard, EVE, QUESTION)) == "permission_denied"
    assert not scripted.requests


def test_ask_without_a_model_that_answers_is_a_tool_error(
    yard: Yard, scripted: ScriptedModel
) -> None:
    assert error_code(ask(yard, ALICE, QUESTION)) == "llm_unavailable"


@pytest.mark.parametrize(
    "args",
    [{}, {"message": 7}, {"message": ""}, {"message": "x" * 8001}, {"message": "6*7", "k": "5"},
     {"message": "6*7", "k": 0}, {"message": "6*7", "max_steps": True}],
)  # fmt: skip
def test_malformed_arguments_are_refused_before_the_model_is_asked(
    yard: Yard, scripted: ScriptedModel, args: dict[str, Any]
) -> None:
    assert error_code(ask(yard, ALICE, args)) == "invalid_request"
    assert not scripted.requests


def test_ask_over_stdio_is_the_processs_caller(env: dict[str, str],
                                               scripted: ScriptedModel) -> None:  # fmt: skip
    scripted.script(SIX_BY_SEVEN)

    async def work() -> Any:
        command, *args = plugyard_mcp("--subject", "alice")
        params = StdioServerParameters(command=command, args=args, env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("ask", QUESTION)

    result = asyncio.run(work())
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["status"] == "answered"


def test_the_typescript_sdk_accepts_the_answer(env: dict[str, str],
                                               scripted: ScriptedModel) -> None:  # fmt: skip
    scripted.script(SIX_BY_SEVEN)
    command, *args = plugyard_mcp("--subject", "alice")
    server = {"command": command, "args": args, "env": env}
    session = sdk_session(server, [{"name": "ask", "arguments": QUESTION}])
    (call,) = session["calls"]
    assert "thrown" not in call, call
    assert call["result"]["structuredContent"]["status"] == "answered"
    listed = {tool["name"]: tool for tool in session["tools"]}
    assert listed["ask"]["outputSchema"] == ASK_TOOL["outputSchema"]


def held(yard: Yard, subject: str, roles: tuple[str, ...], expression: str) -> str:
    """A call held for ``subject``'s confirmation, as the loop holds one (act.Calls)."""
    from plugyard.routing.act import Calls
    from plugyard.routing.choice import Candidate
    from plugyard.runtimes.base import CallContext

    (plugin,) = [p for p in yard.registry.list() if p.id == "calculator"]
    candidate = Candidate("calculator", plugin.descriptor.operations[0], 1.0)
    calls = Calls(yard.executor, CallContext("rq-held", subject, roles), (), yard.governance)
    return str(calls.hold(candidate, {"expression": expression})["receipt"])


@pytest.mark.parametrize("mode", ["tools", "discovery"])
def test_confirm_runs_a_held_call_for_the_caller_it_was_held_for_only(
    yard: Yard, mode: str
) -> None:
    front = McpFront(yard, "discovery" if mode == "discovery" else "tools")
    assert "confirm" in [t["name"] for t in front.list_tools(ALICE)]
    receipt = held(yard, "alice", ("boss",), "6*7")
    refused = asyncio.run(front.call_tool(BOB, "confirm", {"receipt": receipt}))
    assert error_code(refused) == "invalid_receipt"
    done = asyncio.run(front.call_tool(ALICE, "confirm", {"receipt": receipt}))
    assert done["isError"] is False and done["structuredContent"]["result"] == 42, done
    again = asyncio.run(front.call_tool(ALICE, "confirm", {"receipt": receipt}))
    assert error_code(again) == "receipt_used"
    assert error_code(asyncio.run(front.call_tool(ALICE, "confirm", {}))) == "invalid_request"
