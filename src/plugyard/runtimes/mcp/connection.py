"""One open MCP client session, held by its own task.

The SDK's transports and session are anyio context managers that must be entered and
left by the same task, so a connection runs them in a task of its own and other tasks
send requests through the open session. Every request races the connection's end: when
the server exits, sends garbage or the connection is closed, a request in flight fails
at once with the reason instead of waiting for its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import mcp.types as mt
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from plugyard.runtimes.base import ErrorInfo

Streams = tuple[Any, Any]
Opener = Callable[[], AbstractAsyncContextManager[Streams]]
T = TypeVar("T")
_CLIENT = mt.Implementation(name="plugyard", version="1")
_CLOSE_WAIT_S = 10.0


class ConnectionLost(Exception):
    """The session ended; ``error`` says why, with a documented code."""

    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(error.message)
        self.error = error


class McpConnection:
    """A session to one server. :meth:`open` it, send requests, :meth:`close` it."""

    def __init__(self, opener: Opener, on_tools_changed: Callable[[], None]) -> None:
        self._opener = opener
        self._on_tools_changed = on_tools_changed
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._ended = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.failure: ErrorInfo | None = None
        self.in_flight = 0  # tools/call requests awaiting their answer
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._ended.is_set() and self.failure is None

    async def open(self, timeout_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._hold(), name="plugyard-mcp-session")
        try:
            async with asyncio.timeout(timeout_s):
                await self._first(self._ready.wait())
        except TimeoutError:
            self._fail("plugin_unavailable", f"the MCP server did not start in {timeout_s:g} s")
            await self.close()
            raise ConnectionLost(self._failure()) from None
        except BaseException:
            await self.close()
            raise

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(100):  # a server paging forever is cut off
            params = mt.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._first(self._live().list_tools(params=params))
            tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True)
                         for t in page.tools)  # fmt: skip
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # send_request, not call_tool: the SDK's own output check would raise before the
        # executor could answer with its documented code.
        request = mt.CallToolRequest(
            params=mt.CallToolRequestParams(name=name, arguments=arguments)
        )
        self.in_flight += 1
        try:
            result = await self._first(self._live().send_request(request, mt.CallToolResult))
        finally:
            self.in_flight -= 1
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def close(self) -> None:
        """End the session; for stdio, the server's process tree is gone afterwards."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_CLOSE_WAIT_S):
                await asyncio.shield(task)
        if not task.done():
            task.cancel()

    # ------------------------------------------------------------------ internals

    def _live(self) -> ClientSession:
        if self._session is None or not self.alive:
            raise ConnectionLost(self._failure())
        return self._session

    def _failure(self) -> ErrorInfo:
        return self.failure or ErrorInfo("plugin_unavailable", "the MCP session is closed")

    def _fail(self, code: str, message: str) -> None:
        if self.failure is None:
            self.failure = ErrorInfo(code, message)

    async def _first(self, work: Coroutine[Any, Any, T]) -> T:
        """``work``'s result, unless the connection ends first."""
        job = asyncio.ensure_future(work)
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({job, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not job.done():
                job.cancel()
                with contextlib.suppress(BaseException):
                    await job
        if not job.done() or job.cancelled():
            raise ConnectionLost(self._failure())
        error = job.exception()
        if isinstance(error, MCPError):
            if self._ended.is_set():
                raise ConnectionLost(self._failure())
            raise ConnectionLost(ErrorInfo("plugin_error", f"the MCP server answered: {error}"))
        if error is not None:
            self._fail("invalid_output", f"the MCP server's reply is not valid: {error}")
            raise ConnectionLost(self._failure())
        return job.result()

    async def _hold(self) -> None:
        try:
            async with (
                self._opener() as (read, write),
                ClientSession(
                    read, write, message_handler=self._on_message, client_info=_CLIENT
                ) as session,
            ):
                await session.initialize()
                self._session = session
                self._ready.set()
                await self._closing.wait()
        except asyncio.CancelledError:
            self._fail("cancelled", "the MCP session was cancelled")
            raise
        except Exception as exc:  # the transport or handshake failed: a reason, not a crash
            self._fail("plugin_unavailable", f"the MCP session failed: {_reason(exc)}")
        finally:
            self._fail("plugin_unavailable", "the MCP server closed the connection")
            self._session = None
            self._ended.set()
            self._ready.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            # Garbage on the wire: this session cannot be trusted any more.
            self._fail("invalid_output", f"the MCP server sent an invalid message: {message}")
            self._closing.set()
            self._ended.set()
            return
        root = getattr(message, "root", message)
        if isinstance(root, mt.ToolListChangedNotification):
            self._on_tools_changed()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}"[:500]
