"""The outbound guard: judged once when a URL is given, and again on every connect.

The check that matters happens at connect time, on the socket's own address: the HTTP
client creates every socket through :meth:`OutboundGuard.socket_factory`, which sees the
numeric address the socket is about to connect to — after DNS, for every redirect hop,
for every reused name whose record has since changed (DNS rebinding). A URL's text is
also checked when it is given (:meth:`OutboundGuard.check_url`) so that a registration
pointing where it must not is refused before anything is stored, with a clear reason.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

from plugyard.errors import PlugyardError
from plugyard.runtimes.outbound.addresses import Allowlist, blocked_reason

#: Marks a refused connect in the text of the OSError that carries it: the connection
#: library may fold several attempts' errors into one plain OSError.
BLOCKED_MARK = "outbound connection refused by plugyard"
SCHEMES = frozenset({"http", "https"})


class OutboundError(PlugyardError):
    """An outbound request that could not be made or answered; ``code`` says how
    (``outbound_blocked``, ``invalid_request``, ``timeout``, ``plugin_unavailable``,
    ``invalid_output``)."""

    default_code = "outbound_blocked"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message, code=code)
        self.details = details


class BlockedAddress(OSError):
    """Raised from the socket factory: the connection is never attempted."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        super().__init__(f"{BLOCKED_MARK}: {host} port {port} is {reason}")
        self.host, self.port, self.reason = host, port, reason


@dataclass(frozen=True)
class OutboundGuard:
    """The rules (:func:`blocked_reason`) less what the operator's allowlist opens."""

    allowlist: Allowlist = field(default_factory=Allowlist)
    resolve_timeout_s: float = 2.0

    @classmethod
    def of(cls, allow: Iterable[str] = ()) -> OutboundGuard:
        return cls(Allowlist.parse(allow))

    def judge(self, address: str, port: int | None = None) -> str | None:
        """Why connecting to ``address``:``port`` is refused; ``None`` when allowed."""
        ip = ip_address(address.split("%", 1)[0])
        if self.allowlist.allows(ip, port):
            return None
        return blocked_reason(ip)

    def socket_factory(self, addr_info: tuple[Any, ...]) -> socket.socket:
        """aiohttp's ``TCPConnector(socket_factory=...)``: refuse before connecting."""
        family, type_, proto, _, sockaddr = addr_info
        host, port = str(sockaddr[0]), int(sockaddr[1])
        reason = self.judge(host, port)
        if reason is not None:
            raise BlockedAddress(host, port, reason)
        return socket.socket(family=family, type=type_, proto=proto)

    async def check_url(self, url: str, *, where: str = "url") -> None:
        """Refuse ``url`` when its scheme is not HTTP(S) or its host resolves, now, to an
        address the rules refuse. A name that does not resolve is let through: the
        connect-time check judges whatever it resolves to later."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise OutboundError(f"{where}: not a URL: {exc}", code="invalid_request") from None
        if parts.scheme.lower() not in SCHEMES or not parts.hostname:
            raise OutboundError(
                f"{where}: {url!r} is not an http(s) URL with a host", code="invalid_request"
            )
        if port is None:
            port = 443 if parts.scheme.lower() == "https" else 80
        for address in await self._addresses(parts.hostname, port):
            reason = self.judge(address, port)
            if reason is not None:
                raise OutboundError(
                    f"{where}: {parts.hostname} resolves to {address}, {reason}",
                    code="outbound_blocked",
                    url=url,
                    address=address,
                    reason=reason,
                )

    async def _addresses(self, host: str, port: int) -> list[str]:
        try:
            return [str(ip_address(host.split("%", 1)[0]))]
        except ValueError:
            pass
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.resolve_timeout_s):
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError, UnicodeError):
            return []
        return sorted({str(info[4][0]) for info in infos})


def blocked_in(exc: BaseException) -> str | None:
    """The refusal text when ``exc`` (or what caused it) is a blocked connect."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, BlockedAddress):
            return str(seen)
        text = str(seen)
        if BLOCKED_MARK in text:
            return text[text.index(BLOCKED_MARK) :]
        seen = seen.__cause__ or getattr(seen, "os_error", None)
    return None
