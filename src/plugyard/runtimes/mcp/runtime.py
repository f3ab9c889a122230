"""The ``mcp`` runtime: an MCP server (stdio or streamable HTTP) is a plugin and its
tools are the plugin's operations (docs/mcp.md).

``check`` connects once (in a worker thread, so it works inside and outside an event
loop), lists the tools and pins each tool's definition hash; ``describe`` turns the tools
into operations. Calls reuse one session per plugin, opened on first use and opened again
when it broke. Before a call the tool list is read again if the server said it changed
(``notifications/tools/list_changed``); a tool whose definition no longer matches its pin
answers ``tool_changed`` until an admin approves it (:meth:`McpPluginRuntime.approve`).
A call cancelled or timed out, garbage on the wire, an oversized result: the session is
closed (a stdio server's whole process tree with it) and the next call opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from plugyard.manifest.model import McpRuntime, Operation, PluginDescriptor
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Target
from plugyard.runtimes.mcp.connection import ConnectionLost, McpConnection
from plugyard.runtimes.mcp.convert import ToolSet, outcome_of, read_tools
from plugyard.runtimes.mcp.transports import opener_for, spec_problem
from plugyard.runtimes.outbound.guard import OutboundGuard
from plugyard.store.mcp_pins import PinRepository, SqlPinRepository, ToolPin
from plugyard.store.store import Store

T = TypeVar("T")
DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
DEFAULT_CONNECT_TIMEOUT_S = 15.0
_encode = msgspec.json.Encoder().encode


@dataclass
class _Session:
    """The live state of one plugin's server in one event loop."""

    content_hash: str
    connection: McpConnection
    loop: asyncio.AbstractEventLoop
    tools: ToolSet | None = None
    stale: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class McpPluginRuntime:
    """Runs the tools of ``mcp`` plugins (the ``Runtime`` protocol)."""

    kind = "mcp"

    def __init__(
        self,
        pins: PinRepository | None = None,
        guard: OutboundGuard | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # No repository given: the pins live in an in-memory store of this runtime's own.
        self.pins: PinRepository = (
            pins if pins is not None else SqlPinRepository(Store.open(":memory:"))
        )
        self.guard = guard or OutboundGuard()
        self._clock = clock
        self._probed: dict[tuple[str, str], ToolSet | str] = {}
        self._sessions: dict[str, _Session] = {}
        self._closing: set[asyncio.Task[None]] = set()
        #: Told ``(plugin_id, operations)`` when a server's tool list gains or loses a
        #: tool; the yard re-registers the plugin with them (a changed definition of a
        #: known tool is the pins' business instead).
        self.tools_changed: Callable[[str, tuple[Operation, ...]], None] | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ registration

    def check(self, target: Target) -> str | None:
        found = self._probe(target)
        return found if isinstance(found, str) else None

    def describe(self, target: Target) -> PluginDescriptor | None:
        """The descriptor with one operation per usable tool."""
        found = self._probe(target)
        if isinstance(found, str):
            return None
        return target.descriptor.model_copy(update={"operations": found.operations})

    def _probe(self, target: Target) -> ToolSet | str:
        key = (target.descriptor.id, target.content_hash or f"@{id(target.descriptor)}")
        with self._lock:
            held = self._probed.get(key)
        if held is not None:
            return held
        spec = target.descriptor.runtime
        if not isinstance(spec, McpRuntime):
            return f"not an mcp plugin (runtime {spec.kind!r})"
        problem = spec_problem(spec)
        if problem is not None:
            return problem
        try:
            tools = _in_thread(lambda: self._list_once(target, spec))
        except ConnectionLost as exc:
            return f"{exc.error.code}: {exc.error.message}"
        found = read_tools(tools)
        self._observe(target.descriptor.id, found)
        with self._lock:
            self._probed[key] = found
        return found

    async def _list_once(self, target: Target, spec: McpRuntime) -> list[dict[str, Any]]:
        opener = opener_for(target, spec, self.guard)
        if isinstance(opener, ErrorInfo):
            raise ConnectionLost(opener)
        connection = McpConnection(opener, lambda: None)
        try:
            await connection.open(_connect_timeout(spec))
            async with asyncio.timeout(_connect_timeout(spec)):
                return await connection.list_tools()
        except TimeoutError:
            raise ConnectionLost(
                ErrorInfo("plugin_unavailable", "the MCP server did not list its tools in time")
            ) from None
        finally:
            await connection.close()

    def _observe(self, plugin_id: str, tools: ToolSet) -> dict[str, ToolPin]:
        now = self._clock()
        return {name: self.pins.observe(plugin_id, name, digest, now)
                for name, digest in tools.digests.items()}  # fmt: skip

    # ------------------------------------------------------------------ administration

    def approve(self, plugin_id: str, tool: str, by: str | None = None) -> ToolPin | None:
        """Trust the definition the server shows now; ``None`` when never seen."""
        return self.pins.approve(plugin_id, tool, by, self._clock())

    def in_flight(self, plugin_id: str) -> int:
        """Tool calls of ``plugin_id`` awaiting their answer in this process."""
        held = self._sessions.get(plugin_id)
        return held.connection.in_flight if held is not None else 0

    def tool_pins(self, plugin_id: str | None = None) -> list[ToolPin]:
        return self.pins.list(plugin_id)

    async def aclose(self) -> None:
        """Close every session of this event loop (the servers stop)."""
        loop = asyncio.get_running_loop()
        mine = [s for s in self._sessions.values() if s.loop is loop]
        self._sessions = {k: s for k, s in self._sessions.items() if s.loop is not loop}
        await asyncio.gather(*(s.connection.close() for s in mine), return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    # ------------------------------------------------------------------ calls

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        del context, host  # an MCP server sees only the tool's arguments
        spec = target.descriptor.runtime
        if not isinstance(spec, McpRuntime):
            return _failure("plugin_unavailable", "not an mcp plugin")
        session: _Session | None = None
        try:
            session = await self._session(target, spec)
            tools = await self._tools(target.descriptor.id, session)
            digest = tools.digests.get(operation.id)
            if digest is None:
                why = tools.rejected.get(operation.id, "the server no longer lists it")
                return _failure("operation_not_found", f"tool {operation.id!r}: {why}")
            pin = self._pin(target.descriptor.id, operation.id)
            if pin is not None and (pin.changed or pin.pinned_hash != digest):
                return _failure(
                    "tool_changed",
                    f"tool {operation.id!r} changed since it was approved; an admin must "
                    "re-approve it",
                    pinned=pin.pinned_hash,
                    seen=digest,
                )
            result = await session.connection.call_tool(operation.id, params)
        except ConnectionLost as exc:
            if session is not None:
                self._drop(target.descriptor.id, session)
            return Outcome(status="error", error=exc.error)
        except asyncio.CancelledError:
            # A deadline or a caller gave up: the server may be stuck mid-call, so this
            # session goes (its process tree with it) and the next call opens another.
            if session is not None:
                self._drop(target.descriptor.id, session)
            raise
        if len(_encode(result)) > _max_result(spec):
            self._drop(target.descriptor.id, session)
            return _failure("invalid_output", f"the MCP result exceeds {_max_result(spec)} bytes")
        return outcome_of(result)

    def _pin(self, plugin_id: str, tool: str) -> ToolPin | None:
        for pin in self.pins.list(plugin_id):
            if pin.tool == tool:
                return pin
        return None

    async def _session(self, target: Target, spec: McpRuntime) -> _Session:
        plugin_id = target.descriptor.id
        loop = asyncio.get_running_loop()
        held = self._sessions.get(plugin_id)
        if (
            held is not None
            and held.loop is loop
            and held.content_hash == target.content_hash
            and held.connection.alive
        ):
            return held
        if held is not None and held.loop is loop:
            self._drop(plugin_id, held)
        opener = opener_for(target, spec, self.guard)
        if isinstance(opener, ErrorInfo):
            raise ConnectionLost(opener)
        session: _Session | None = None

        def changed() -> None:
            if session is not None:
                session.stale = True
                # Read the new list now, so that added tools appear without a call first.
                task = loop.create_task(self._refresh(plugin_id, session))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

        connection = McpConnection(opener, changed)
        session = _Session(target.content_hash, connection, loop)
        self._sessions[plugin_id] = session
        try:
            await connection.open(_connect_timeout(spec))
        except BaseException:
            self._sessions.pop(plugin_id, None)
            raise
        return session

    async def _tools(self, plugin_id: str, session: _Session) -> ToolSet:
        async with session.lock:
            if session.tools is None or session.stale:
                before = session.tools
                session.stale = False
                session.tools = read_tools(await session.connection.list_tools())
                self._observe(plugin_id, session.tools)
                notify = self.tools_changed
                if notify and before is not None and _names(before) != _names(session.tools):
                    notify(plugin_id, session.tools.operations)
            return session.tools

    async def _refresh(self, plugin_id: str, session: _Session) -> None:
        # A server that cannot list its tools now fails the next call instead.
        with contextlib.suppress(Exception):
            await self._tools(plugin_id, session)

    def _drop(self, plugin_id: str, session: _Session) -> None:
        if self._sessions.get(plugin_id) is session:
            del self._sessions[plugin_id]
        task = asyncio.get_running_loop().create_task(session.connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


def _names(tools: ToolSet) -> frozenset[str]:
    return frozenset(op.id for op in tools.operations)


def _failure(code: str, message: str, **details: Any) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message, details))


def _connect_timeout(spec: McpRuntime) -> float:
    value = spec.config.get("connect_timeout_s")
    if isinstance(value, int | float) and value > 0:
        return float(value)
    return DEFAULT_CONNECT_TIMEOUT_S


def _max_result(spec: McpRuntime) -> int:
    value = spec.config.get("max_result_bytes")
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_RESULT_BYTES


def _in_thread(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``work`` on a private event loop in a worker thread and wait for it: ``check``
    is synchronous and may be called from inside a running loop."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(work())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, name="plugyard-mcp-probe", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
