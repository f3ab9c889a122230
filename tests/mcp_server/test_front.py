"""The MCP view of a yard: what each caller sees and what each tools/call does."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema_rs

from plugyard.mcp_server import McpFront
from plugyard.mcp_server.front import RECEIPT_META
from plugyard.types import Caller
from plugyard.yard import Yard

from .conftest import calls_audited, error_code

BOB, ALICE, EVE = Caller("bob"), Caller("alice"), Caller("eve")


def call(front: McpFront, caller: Caller, name: str, args: dict[str, Any], **meta: Any) -> Any:
    return asyncio.run(front.call_tool(caller, name, args, meta))


def test_tools_mode_lists_what_the_caller_may_call_with_stable_short_names(yard: Yard) -> None:
    front = McpFront(yard)
    alice = {t["name"]: t for t in front.list_tools(ALICE)}
    bob = {t["name"] for t in front.list_tools(BOB)}
    assert bob == {"calculator", "ask", "confirm"}  # ask routes among what bob may call
    assert "calculator" in alice and len(alice) > 10
    assert all(len(name) <= 64 for name in alice)
    assert {t["name"] for t in front.list_tools(ALICE)} == set(alice)
    assert "inputSchema" in alice["calculator"]


def test_a_denied_caller_sees_no_tool_and_its_call_is_refused_and_audited(yard: Yard) -> None:
    front = McpFront(yard)
    assert front.list_tools(EVE) == []
    result = call(front, EVE, "calculator", {"expression": "1+1"})
    assert error_code(result) == "permission_denied"
    assert calls_audited(yard, "eve") == ["error"]


def test_a_call_is_one_audited_executor_call(yard: Yard) -> None:
    front = McpFront(yard)
    result = call(front, ALICE, "calculator", {"expression": "6*7"})
    assert result["isError"] is False
    assert result["structuredContent"]["result"] == 42
    assert calls_audited(yard, "alice") == ["success"]


def test_a_success_is_structured_content_that_fits_the_advertised_output_schema(
    yard: Yard,
) -> None:
    front = McpFront(yard)
    schema = {t["name"]: t for t in front.list_tools(ALICE)}["calculator"]["outputSchema"]
    result = call(front, ALICE, "calculator", {"expression": "6*7"})
    assert jsonschema_rs.is_valid(schema, result["structuredContent"])
    assert result["_meta"]["io.plugyard/status"] == "success"


def test_a_failing_call_is_an_error_with_its_code_and_message_as_text(yard: Yard) -> None:
    front = McpFront(yard)
    failed = call(front, ALICE, "calculator", {"expression": "1/0"})
    assert error_code(failed) == "invalid_parameters"  # the calculator's code for 1/0
    missing = call(front, ALICE, "calculator", {})
    assert error_code(missing) == "invalid_parameters"
    assert calls_audited(yard, "alice") == ["error", "error"]


def test_approval_round_trip_through_the_receipt_in_meta(yard: Yard) -> None:
    front = McpFront(yard)
    schema = front.list_tools(BOB)[0]["outputSchema"]
    pending = call(front, BOB, "calculator", {"expression": "6*7"})
    data = pending["structuredContent"]
    assert pending["isError"] is False and data["status"] == "pending_approval"
    assert jsonschema_rs.is_valid(schema, data)
    assert data["action_id"] in pending["content"][0]["text"]
    assert data["receipt"] in pending["content"][0]["text"]
    yard.admin.decide(data["action_id"], Caller("alice", ("boss",)), True)
    done = call(front, BOB, "calculator", {"expression": "6*7"}, **{RECEIPT_META: data["receipt"]})
    assert done["isError"] is False and done["structuredContent"]["result"] == 42
    assert jsonschema_rs.is_valid(schema, done["structuredContent"])
    assert not jsonschema_rs.is_valid(schema, {"status": "pending_approval"})
    again = call(front, BOB, "calculator", {"expression": "6*7"}, **{RECEIPT_META: data["receipt"]})
    assert error_code(again) == "receipt_used"


def test_an_unknown_tool_is_operation_not_found(yard: Yard) -> None:
    result = call(McpFront(yard), ALICE, "no_such_tool", {})
    assert error_code(result) == "operation_not_found"


def test_discovery_mode_shows_tools_that_search_call_and_ask(yard: Yard) -> None:
    front = McpFront(yard, "discovery")
    assert [t["name"] for t in front.list_tools(ALICE)] == ["search", "call", "ask", "confirm"]
    found = call(front, ALICE, "search", {"query": "evaluate an arithmetic expression", "k": 5})
    plugins = [m["plugin"] for m in found["structuredContent"]["matches"]]
    assert "calculator" in plugins
    done = call(front, ALICE, "call", {"plugin": "calculator", "operation": "execute",
                                      "parameters": {"expression": "2+3"}})  # fmt: skip
    assert done["structuredContent"]["result"] == 5


def test_discovery_search_never_shows_what_the_caller_may_not_call(yard: Yard) -> None:
    front = McpFront(yard, "discovery")
    found = call(front, BOB, "search", {"query": "evaluate an arithmetic expression", "k": 10})
    assert {m["plugin"] for m in found["structuredContent"]["matches"]} <= {"calculator"}
    assert call(front, EVE, "search", {"query": "calculator"})["structuredContent"]["matches"] == []
    bad = call(front, ALICE, "search", {"query": "", "k": 5})
    assert error_code(bad) == "invalid_query"


def test_discovery_call_carries_the_receipt_and_idempotency_key(yard: Yard) -> None:
    front = McpFront(yard, "discovery")
    args = {"plugin": "calculator", "parameters": {"expression": "1+2"}}
    pending = call(front, BOB, "call", args)["structuredContent"]
    yard.admin.decide(pending["action_id"], Caller("alice", ("boss",)), True)
    done = call(front, BOB, "call", {**args, "approval_receipt": pending["receipt"]})
    assert done["structuredContent"]["result"] == 3
    first = call(front, ALICE, "call", {**args, "idempotency_key": "k-1"})
    second = call(front, ALICE, "call", {**args, "idempotency_key": "k-1"})
    assert first["structuredContent"] == second["structuredContent"]


def test_a_discovery_call_naming_its_search_teaches_discovery(yard: Yard) -> None:
    front = McpFront(yard, "discovery")
    query = "evaluate an arithmetic expression"
    found = call(front, ALICE, "search", {"query": query, "k": 5})["structuredContent"]
    assert found["search_id"]
    args = {"plugin": "calculator", "parameters": {"expression": "2+3"}}
    call(front, ALICE, "call", {**args, "search_id": "not-a-search"})
    assert yard.discovery.learning.remembered("calculator") == []
    call(front, ALICE, "call", {**args, "search_id": found["search_id"]})
    (row,) = yard.discovery.learning.remembered("calculator")
    assert (row.subject, row.query, row.operation) == ("alice", query, "execute")
    # bob's call waits for approval: not a success, so nothing is learned.
    mine = call(front, BOB, "search", {"query": query})["structuredContent"]["search_id"]
    call(front, BOB, "call", {**args, "search_id": mine})
    assert len(yard.discovery.learning.remembered("calculator")) == 1
