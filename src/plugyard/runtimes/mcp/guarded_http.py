"""The HTTP client of streamable-HTTP MCP servers, under plugyard's outbound guard.

The MCP SDK speaks HTTP through ``httpx2``. Its connection pool opens every TCP
connection through a *network backend*; :class:`GuardedBackend` is one that resolves the
host itself, asks :class:`OutboundGuard` about each numeric address and connects only to
an allowed one — the same connect-time rule the ``http`` runtime applies through its
socket factory, so DNS rebinding and redirects cannot reach a refused address. TLS is
still negotiated for the URL's host name (the pool passes it on to ``start_tls``).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore2
import httpx2

from plugyard.runtimes.outbound.guard import BLOCKED_MARK, OutboundGuard


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to addresses the guard allows."""

    def __init__(self, guard: OutboundGuard) -> None:
        self._guard = guard
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        refusals: list[str] = []
        for address in await _addresses(host, port):
            reason = self._guard.judge(address, port)
            if reason is not None:
                refusals.append(f"{address} is {reason}")
                continue
            return await self._inner.connect_tcp(
                address, port, timeout, local_address, socket_options
            )
        detail = "; ".join(refusals) or "it does not resolve"
        raise httpcore2.ConnectError(f"{BLOCKED_MARK}: {host} port {port}: {detail}")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError(f"{BLOCKED_MARK}: UNIX sockets are not outbound targets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _addresses(host: str, port: int) -> list[str]:
    bare = host.strip("[]")
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in bare else socket.AF_INET, bare)
        return [bare]
    except OSError:
        pass
    try:
        infos = await anyio.getaddrinfo(bare, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def guarded_client(
    guard: OutboundGuard, *, headers: dict[str, str] | None = None, timeout_s: float = 30.0
) -> httpx2.AsyncClient:
    """An ``httpx2`` client whose every connection goes through the guard."""
    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    # The transport builds its pool without a way to pass a backend: swap the pool for
    # one that has ours (same TLS context, default limits).
    ssl_context = transport._pool._ssl_context
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=ssl_context, network_backend=GuardedBackend(guard)
    )
    return httpx2.AsyncClient(
        transport=transport,
        headers=headers,
        timeout=httpx2.Timeout(timeout_s, read=300.0),
        trust_env=False,
        follow_redirects=False,
    )
