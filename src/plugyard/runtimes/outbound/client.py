"""The outbound HTTP client: aiohttp, with every socket made by the guard.

aiohttp rather than httpx by measurement (bench/RESULTS.md, "Outbound client"): at 32
requests in flight on loopback httpx's async client spent several times aiohttp's CPU
per request. A server keeps one session (one connection pool) open between
:meth:`OutboundClient.start` and :meth:`OutboundClient.aclose`; without it — a CLI call
under ``asyncio.run`` — each request opens and closes its own, so nothing is left
bound to a loop that has gone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from plugyard.runtimes.outbound.guard import OutboundError, OutboundGuard, blocked_in

__all__ = ["OutboundClient", "OutboundError", "Reply", "query_pairs"]

DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Reply:
    """A whole response, body capped."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    url: str = ""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class OutboundClient:
    """HTTP requests to URLs plugyard was given, under :class:`OutboundGuard`."""

    def __init__(
        self,
        guard: OutboundGuard | None = None,
        *,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_redirects: int = 5,
        connections: int = 100,
    ) -> None:
        self.guard = guard or OutboundGuard()
        self.max_response_bytes = max_response_bytes
        self.max_redirects = max_redirects
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # lifetime -------------------------------------------------------------------------

    async def start(self) -> None:
        """Keep one session open on the running loop (a server's lifespan)."""
        if self._persistent() is None:
            self._session = self._new_session()
            self._loop = asyncio.get_running_loop()

    async def aclose(self) -> None:
        session, self._session, self._loop = self._session, None, None
        if session is not None and not session.closed:
            await session.close()

    def _persistent(self) -> aiohttp.ClientSession | None:
        session = self._session
        if session is None or session.closed:
            return None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return session if running is self._loop else None

    def _new_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._connections,
            socket_factory=self.guard.socket_factory,
            # The system resolver (hosts file included), whatever extras are installed.
            resolver=aiohttp.ThreadedResolver(),
            ttl_dns_cache=10,
        )
        # trust_env=False: no proxy from the environment can carry a request past the guard.
        return aiohttp.ClientSession(connector=connector, trust_env=False)

    # requests ---------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        url: str,
        *,
        json_body: bytes | None = None,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 30.0,
        max_bytes: int | None = None,
    ) -> Reply:
        """Send one request and read the whole response (at most ``max_bytes``).

        Raises :class:`OutboundError`: ``outbound_blocked`` (the guard refused a
        connect, on any redirect hop), ``timeout``, ``plugin_unavailable`` (no
        connection could be made) or ``invalid_output`` (a response too large or not
        HTTP).
        """
        session = self._persistent()
        if session is not None:
            return await self._send(
                session, method, url, json_body, params, headers, timeout_s, max_bytes
            )
        async with self._new_session() as one_shot:
            return await self._send(
                one_shot, method, url, json_body, params, headers, timeout_s, max_bytes
            )

    async def _send(
        self,
        session: aiohttp.ClientSession,
        method: str,
        url: str,
        json_body: bytes | None,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        headers: Mapping[str, str] | None,
        timeout_s: float,
        max_bytes: int | None,
    ) -> Reply:
        cap = self.max_response_bytes if max_bytes is None else max_bytes
        sent = dict(headers or {})
        if json_body is not None:
            sent.setdefault("Content-Type", "application/json")
        try:
            async with asyncio.timeout(timeout_s):
                async with session.request(
                    method,
                    url,
                    data=json_body,
                    params=params,
                    headers=sent,
                    max_redirects=self.max_redirects,
                ) as response:
                    body = await _read_capped(response, cap)
                    return Reply(
                        response.status,
                        body,
                        {k.lower(): v for k, v in response.headers.items()},
                        str(response.url),
                    )
        except TimeoutError:
            raise OutboundError(
                f"no response from {url} within {timeout_s:g} s", code="timeout"
            ) from None
        except aiohttp.TooManyRedirects:
            raise OutboundError(
                f"{url}: more than {self.max_redirects} redirects", code="invalid_output"
            ) from None
        except (aiohttp.ClientConnectionError, OSError) as exc:
            blocked = blocked_in(exc)
            if blocked is not None:
                raise OutboundError(blocked, code="outbound_blocked", url=url) from None
            if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
                raise OutboundError(f"{url}: {exc}", code="invalid_output") from None
            raise OutboundError(f"cannot reach {url}: {exc}", code="plugin_unavailable") from None
        except aiohttp.InvalidUrlClientError as exc:
            # aiohttp refuses non-canonical IPv4 spellings (127.1, 2130706433) outright.
            raise OutboundError(
                f"not a URL this client sends: {exc}", code="invalid_request"
            ) from None
        except aiohttp.ClientResponseError as exc:
            raise OutboundError(
                f"{url}: bad response: {exc.message}", code="invalid_output"
            ) from None
        except aiohttp.ClientError as exc:
            raise OutboundError(
                f"{url}: {type(exc).__name__}: {exc}", code="invalid_output"
            ) from None


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    declared = response.content_length
    if declared is not None and declared > cap:
        raise OutboundError(
            f"response of {declared} bytes exceeds the cap of {cap}",
            code="invalid_output",
            bytes=declared,
            cap=cap,
        )
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = await response.content.read(_CHUNK)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > cap:
            raise OutboundError(
                f"response exceeds the cap of {cap} bytes", code="invalid_output", cap=cap
            )
        parts.append(chunk)


def query_pairs(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Parameters as a query string: scalars as text (``true``/``false`` for booleans),
    lists as repeated keys, objects as JSON."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item is None:
                continue
            if isinstance(item, bool):
                pairs.append((key, "true" if item else "false"))
            elif isinstance(item, dict | list):
                pairs.append((key, json.dumps(item, separators=(",", ":"))))
            else:
                pairs.append((key, str(item)))
    return pairs
