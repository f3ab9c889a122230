"""Address classification and the operator's allowlist."""

from __future__ import annotations

import pytest

from plugyard.runtimes.outbound.addresses import Allowlist, blocked_reason

BLOCKED = {
    "127.0.0.1": "loopback",
    "127.255.0.9": "loopback",
    "0.0.0.0": "unspecified",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "metadata",
    "169.254.1.1": "link-local",
    "100.100.100.200": "metadata",
    "100.64.0.1": "shared",
    "224.0.0.1": "multicast",
    "240.0.0.1": "",
    "255.255.255.255": "",
    "::1": "loopback",
    "::": "unspecified",
    "fe80::1": "link-local",
    "fc00::1": "private",
    "fd00:ec2::254": "metadata",
    "::ffff:127.0.0.1": "IPv4-mapped address of 127.0.0.1: loopback",
    "::ffff:10.0.0.1": "IPv4-mapped",
    "64:ff9b::7f00:1": "NAT64 address of 127.0.0.1",
    "64:ff9b::a9fe:a9fe": "metadata",
    "64:ff9b:1::1": "local-use NAT64",
    "2002:7f00:1::1": "6to4 address of 127.0.0.1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
    "::127.0.0.1": "IPv4-compatible",
    "ff02::1": "multicast",
}


@pytest.mark.parametrize(("address", "why"), BLOCKED.items())
def test_non_public_addresses_are_refused_with_their_reason(address: str, why: str) -> None:
    reason = blocked_reason(address)
    assert reason is not None
    assert why in reason


@pytest.mark.parametrize("address", ["93.184.215.14", "1.1.1.1", "2606:4700::1111",
                                     "64:ff9b::808:808", "::ffff:8.8.8.8"])  # fmt: skip
def test_public_addresses_are_allowed(address: str) -> None:
    assert blocked_reason(address) is None


def test_an_allowlist_entry_opens_a_network_or_one_port() -> None:
    allow = Allowlist.parse(["10.0.0.0/8", "127.0.0.1:8765", "[::1]:9000", " "])
    assert allow.allows("10.9.8.7", 443)
    assert allow.allows("127.0.0.1", 8765)
    assert allow.allows("::ffff:127.0.0.1", 8765)  # the mapped form is the same address
    assert not allow.allows("127.0.0.1", 8766)
    assert allow.allows("::1", 9000)
    assert not allow.allows("::1", 9001)
    assert not allow.allows("192.168.0.1", 80)
    assert str(allow) == "10.0.0.0/8, 127.0.0.1:8765, [::1]:9000"


@pytest.mark.parametrize("spec", ["localhost:80", "127.0.0.1:0", "10.0.0.0/33", "[::1]x", "a"])
def test_an_allowlist_entry_that_is_not_an_ip_network_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="allowlist entry"):
        Allowlist.parse([spec])
