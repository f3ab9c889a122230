"""MCP servers as plugins: tools become operations, calls reuse one session, and every
bad thing a server can do ends as a documented code with the session replaced."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import PlugyardError
from plugyard.execution.result import Result
from plugyard.manifest.load import load_text
from plugyard.runtimes.base import CallContext, Target
from plugyard.runtimes.mcp import McpPluginRuntime
from plugyard.yard import Settings, Yard

from .conftest import SERVER, stdio_manifest
from .sandbox_state import sandbox_reason


def run(work: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(work())


async def _call(yard: Yard, op: str, params: dict[str, Any] | None = None, **kw: Any) -> Result:
    return await yard.call("mcp-tools", op, params or {}, **kw)


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


async def _gone_async(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.02)  # polls while the loop runs the session's close
    return False


def test_tools_become_operations_with_their_schemas(yard: Yard) -> None:
    plugin = yard.registry.require("mcp-tools")
    assert plugin.available
    ops = {op.id: op for op in plugin.descriptor.operations}
    assert {"add", "echo", "fail", "liar"} <= set(ops)
    assert ops["add"].output_schema is not None
    assert ops["add"].parameters["required"] == ["a", "b"]
    assert ops["add"].effect == "read" and ops["add"].idempotent
    assert ops["echo"].effect == "write"


def test_a_tool_with_an_invalid_schema_is_left_out(yard: Yard) -> None:
    ops = [op.id for op in yard.registry.require("mcp-tools").descriptor.operations]
    assert "broken" not in ops


def test_structured_content_is_the_data_and_text_has_a_documented_shape(yard: Yard) -> None:
    async def work() -> tuple[Result, Result]:
        return await _call(yard, "add", {"a": 2, "b": 3}), await _call(yard, "echo", {"text": "hi"})

    added, echoed = run(work)
    assert added.status == "success" and added.data == {"sum": 5}
    assert echoed.data == {"text": "hi", "content": [{"type": "text", "text": "hi"}]}


def test_calls_reuse_one_session(yard: Yard) -> None:
    async def work() -> list[Any]:
        return [(await _call(yard, "pid")).data["pid"] for _ in range(3)]

    pids = run(work)
    assert len(set(pids)) == 1


def test_is_error_is_a_plugin_error_and_bad_structured_content_fails_validation(
    yard: Yard,
) -> None:
    async def work() -> tuple[Result, Result]:
        return await _call(yard, "fail"), await _call(yard, "liar")

    failed, lied = run(work)
    assert failed.error is not None and failed.error.code == "plugin_error"
    assert lied.error is not None and lied.error.code == "output_validation_error"


def test_a_timed_out_call_kills_the_server_and_the_next_call_opens_a_new_one(yard: Yard) -> None:
    async def work() -> tuple[int, Result, int]:
        first = (await _call(yard, "pid")).data["pid"]
        hung = await _call(yard, "hang", timeout_ms=300)
        second = (await _call(yard, "pid")).data["pid"]
        return first, hung, second

    first, hung, second = run(work)
    assert hung.status == "timeout"
    assert first != second
    assert _gone(first)


def test_garbage_on_the_wire_is_invalid_output_and_the_session_is_replaced(yard: Yard) -> None:
    async def work() -> tuple[int, Result, int]:
        first = (await _call(yard, "pid")).data["pid"]
        garbage = await _call(yard, "garbage", timeout_ms=10_000)
        second = (await _call(yard, "pid")).data["pid"]
        return first, garbage, second

    first, garbage, second = run(work)
    assert garbage.error is not None and garbage.error.code == "invalid_output"
    assert first != second and _gone(first)


def test_an_oversized_result_is_refused_and_the_session_replaced(
    tmp_path: Path, state: Path
) -> None:
    folder = stdio_manifest(tmp_path / "plugins" / "tools", state)
    text = (folder / "plugin.yaml").read_text() + "  max_result_bytes: 2000\n"
    (folder / "plugin.yaml").write_text(text)
    settings = Settings(database=str(tmp_path / "db.sqlite"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",), governed=False)  # fmt: skip
    with Yard.from_settings(settings) as yard:

        async def work() -> tuple[Result, Result]:
            return await _call(yard, "big", {"n": 5000}), await _call(yard, "big", {"n": 10})

        big, small = run(work)
    assert big.error is not None and big.error.code == "invalid_output"
    assert small.status == "success"


def test_a_changed_tool_is_disabled_until_re_approved(yard: Yard) -> None:
    async def work() -> tuple[Result, Result, Result]:
        assert (await _call(yard, "echo", {"text": "a"})).status == "success"
        await _call(yard, "mutate")  # rewrites echo's description, sends list_changed
        changed = await _call(yard, "echo", {"text": "b"})
        other = await _call(yard, "add", {"a": 1, "b": 1})
        yard.approve_mcp_tool("mcp-tools", "echo", by="admin")
        return changed, other, await _call(yard, "echo", {"text": "c"})

    changed, other, approved = run(work)
    assert changed.error is not None and changed.error.code == "tool_changed"
    assert other.status == "success"
    assert approved.status == "success"
    records = yard.admin.tail(50)
    assert any(r.kind == "mcp_tool" and r.operation == "echo" for r in records)


def test_a_tool_the_server_adds_while_connected_appears_without_a_restart(yard: Yard) -> None:
    async def work() -> Result:
        assert (await _call(yard, "grow")).status == "success"  # then list_changed
        deadline = time.monotonic() + 10
        while yard.registry.require("mcp-tools").descriptor.operation("shout") is None:
            assert time.monotonic() < deadline, "the new tool never appeared"
            await asyncio.sleep(0.01)  # the refresh runs on this loop
        return await _call(yard, "shout", {"text": "hi"})

    shouted = run(work)
    assert shouted.status == "success" and shouted.data["text"] == "HI"
    assert yard.search("upper-case the text", 3)[0].plugin_id == "mcp-tools"


def test_pins_are_durable_a_restart_still_refuses_the_changed_tool(
    tmp_path: Path, state: Path
) -> None:
    stdio_manifest(tmp_path / "plugins" / "tools", state)
    settings = Settings(database=str(tmp_path / "db.sqlite"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",))  # fmt: skip
    with Yard.from_settings(settings):
        pass  # the first sight pins every tool
    (state / "variant").write_text("v2")  # changed while nobody was connected
    with Yard.from_settings(settings) as yard:
        pins = {p.tool: p for p in yard.mcp_tool_pins("mcp-tools")}
        assert pins["echo"].changed and not pins["add"].changed
        refused = run(lambda: _call(yard, "echo", {"text": "x"}))
        assert refused.error is not None and refused.error.code == "tool_changed"


def test_approving_a_tool_never_seen_is_operation_not_found(yard: Yard) -> None:
    with pytest.raises(PlugyardError) as caught:
        yard.approve_mcp_tool("mcp-tools", "nope")
    assert caught.value.code == "operation_not_found"


def _untrusted(tmp_path: Path) -> Target:
    folder = tmp_path / "untrusted"
    (folder / "state").mkdir(parents=True)
    shutil.copy(SERVER, folder / "tool_server.py")
    text = (
        "id: boxed\nname: Boxed\ndescription: An untrusted MCP server.\ntype: mcp\n"
        f"config:\n  command: {sys.executable}\n  args: [tool_server.py, state]\n"
    )
    descriptor = load_text(text).plugins[0]
    return Target(descriptor, str(folder), "untrusted", "boxed-1")


@pytest.mark.skipif(sandbox_reason() is None, reason="the sandbox is available here")
def test_an_untrusted_stdio_server_is_refused_without_the_sandbox(tmp_path: Path) -> None:
    problem = McpPluginRuntime().check(_untrusted(tmp_path))
    assert problem is not None and problem.startswith("sandbox_unavailable")


@pytest.mark.skipif(sandbox_reason() is not None, reason="no sandbox here")
def test_an_untrusted_stdio_server_runs_in_the_sandbox_seeing_only_its_folder(
    tmp_path: Path, yard: Yard
) -> None:
    runtime = McpPluginRuntime()
    target = _untrusted(tmp_path)
    assert runtime.check(target) is None
    refined = runtime.describe(target)
    assert refined is not None
    boxed = Target(refined, target.location, "untrusted", target.content_hash)
    outside = str(tmp_path / "db.sqlite")  # the yard's database, beside the plugin folder
    assert Path(outside).exists()

    async def work() -> tuple[Any, Any]:
        op = refined.operation("exists")
        assert op is not None
        context = CallContext("r-1")
        seen = await runtime.invoke(boxed, op, {"path": outside}, context, None)
        own = await runtime.invoke(boxed, op, {"path": "tool_server.py"}, context, None)
        await runtime.aclose()
        return seen, own

    seen, own = run(work)
    assert seen.data == {"exists": False}
    assert own.data == {"exists": True}


def test_a_cancelled_call_leaves_no_server_process(yard: Yard) -> None:
    async def work() -> int:
        pid = int((await _call(yard, "pid")).data["pid"])
        task = asyncio.create_task(_call(yard, "hang"))
        runtime = yard.runtimes["mcp"]
        assert isinstance(runtime, McpPluginRuntime)
        deadline = time.monotonic() + 10
        while runtime.in_flight("mcp-tools") == 0:  # the request is on the wire
            assert time.monotonic() < deadline
            await asyncio.sleep(0.005)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert await _gone_async(pid)  # no aclose: cancelling the call alone ended the process tree
        return pid

    run(work)
