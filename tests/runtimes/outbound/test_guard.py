"""The guard judges a URL when it is given and every socket when it connects; the
canaries on loopback prove that a refused connection is never even attempted."""

from __future__ import annotations

import asyncio
import socket

import pytest

from plugyard.runtimes.outbound import OutboundClient, OutboundError, OutboundGuard

from ..http.servers import Canary, PluginServer

SPELLINGS = [
    "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "localhost",
    "0.0.0.0", "[::ffff:127.0.0.1]", "[::1]", "[64:ff9b::7f00:1]",
]  # fmt: skip


def _code(coro: object) -> str | None:
    try:
        asyncio.run(coro)  # type: ignore[arg-type]
    except OutboundError as exc:
        return exc.code
    return None


@pytest.mark.parametrize("host", SPELLINGS)
def test_every_spelling_of_this_host_is_refused_when_given(host: str) -> None:
    assert _code(OutboundGuard().check_url(f"http://{host}:8080/x")) == "outbound_blocked"


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data/", "https://10.0.0.5/", "http://[fe80::1]/"]
)
def test_private_and_metadata_urls_are_refused_when_given(url: str) -> None:
    assert _code(OutboundGuard().check_url(url)) == "outbound_blocked"


@pytest.mark.parametrize(
    "url", ["ftp://1.1.1.1/", "file:///etc/passwd", "http:///x", "http://h:x/"]
)
def test_urls_that_are_not_http_are_refused(url: str) -> None:
    assert _code(OutboundGuard().check_url(url)) == "invalid_request"


def test_a_name_that_does_not_resolve_is_left_to_the_connect_time_check() -> None:
    assert _code(OutboundGuard().check_url("http://plugins.invalid/x")) is None


def test_the_allowlist_opens_exactly_the_port_it_names() -> None:
    guard = OutboundGuard.of(["127.0.0.1:8080"])
    assert _code(guard.check_url("http://127.0.0.1:8080/")) is None
    assert _code(guard.check_url("http://127.1:8080/")) is None  # same address
    assert _code(guard.check_url("http://127.0.0.1:8081/")) == "outbound_blocked"


def test_the_socket_factory_refuses_before_a_socket_exists() -> None:
    info = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80))
    with pytest.raises(OSError, match="loopback"):
        OutboundGuard().socket_factory(info)


@pytest.mark.parametrize("host", [*SPELLINGS[:-3], "[::ffff:127.0.0.1]"])
def test_a_connection_to_a_canary_is_refused_at_connect_time(canary: Canary, host: str) -> None:
    client = OutboundClient(OutboundGuard())
    url = f"http://{host}:{canary.port}/"
    # aiohttp refuses non-canonical IPv4 spellings as URLs; every other one is blocked.
    assert _code(client.request("GET", url, timeout_s=5)) in {"outbound_blocked", "invalid_request"}
    assert canary.accepted == []


def test_the_canary_does_hear_an_allowlisted_connection(canary: Canary) -> None:
    # The control: the same request, allowlisted, does reach the canary.
    client = OutboundClient(OutboundGuard.of([f"127.0.0.1:{canary.port}"]))
    code = _code(client.request("GET", f"http://127.0.0.1:{canary.port}/", timeout_s=5))
    assert code in {"invalid_output", "plugin_unavailable"}  # it closes without answering
    assert canary.accepted  # (a GET is retried once on a dropped connection)


def test_a_redirect_to_a_canary_is_refused_on_the_hop(
    plugin_server: PluginServer, canary: Canary
) -> None:
    client = OutboundClient(OutboundGuard.of([plugin_server.allow]))
    to = f"http://127.0.0.1:{canary.port}/stolen"
    url = f"{plugin_server.url}/redirect?to={to}"
    assert _code(client.request("GET", url, timeout_s=5)) == "outbound_blocked"
    assert canary.accepted == []


def test_a_persistent_session_guards_the_same_way(canary: Canary) -> None:
    async def run() -> None:
        client = OutboundClient(OutboundGuard())
        await client.start()
        try:
            await client.request("GET", f"http://localhost:{canary.port}/", timeout_s=5)
        finally:
            await client.aclose()

    assert _code(run()) == "outbound_blocked"
    assert canary.accepted == []
