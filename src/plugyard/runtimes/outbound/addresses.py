"""Which IP addresses an outbound connection may reach, and the operator's allowlist.

Addresses are judged as the socket sees them — numeric, after the resolver — so every
spelling of loopback in a URL (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``,
``localhost``) has become ``127.0.0.1`` by the time it is judged. IPv6 forms that carry
an IPv4 address are judged by the address inside: IPv4-mapped ``::ffff:a.b.c.d``, NAT64
``64:ff9b::/96``, 6to4 ``2002::/16`` and IPv4-compatible ``::a.b.c.d``. Classification is
the standard library's :mod:`ipaddress` (maintained with CPython, tracking the IANA
special-purpose registries); this module only adds the forms it does not unwrap and the
cloud metadata addresses, so a refusal can say exactly why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import (
    IPv4Address,
    IPv4Network,
    IPv6Address,
    IPv6Network,
    ip_address,
    ip_network,
)

IPAddress = IPv4Address | IPv6Address
IPNetwork = IPv4Network | IPv6Network

#: Instance-metadata endpoints: AWS/GCP/Azure (and their IPv6 twin), AWS ECS, Alibaba,
#: Oracle. Most are non-global anyway; naming them makes the refusal say so.
METADATA: frozenset[IPAddress] = frozenset(
    {
        IPv4Address("169.254.169.254"),
        IPv4Address("169.254.170.2"),
        IPv4Address("100.100.100.200"),
        IPv4Address("192.0.0.192"),
        IPv6Address("fd00:ec2::254"),
    }
)
_NAT64 = IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = IPv6Network("64:ff9b:1::/48")  # RFC 8215: the IPv4 part's place varies
_IPV4_COMPATIBLE = IPv6Network("::/96")
_SHARED = IPv4Network("100.64.0.0/10")  # carrier-grade NAT: not private, not global


def blocked_reason(address: str | IPAddress) -> str | None:
    """Why a connection to ``address`` is refused, or ``None`` when it may be made."""
    ip = ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, IPv6Address):
        if ip.scope_id:
            ip = IPv6Address(str(ip).split("%", 1)[0])
        inner, form = _embedded(ip)
        if form is not None:
            if inner is None:
                return form
            why = blocked_reason(inner)
            return f"{form} of {inner}: {why}" if why else None
    if ip in METADATA:
        return "cloud metadata address"
    if ip.is_unspecified:
        return "unspecified address (reaches this host)"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, IPv4Address) and ip in _SHARED:
        return "shared address space (carrier-grade NAT)"
    if ip.is_private:
        return "private network"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not globally routable"
    return None


def _embedded(ip: IPv6Address) -> tuple[IPv4Address | None, str | None]:
    """The IPv4 address an IPv6 address carries, and the name of the form."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, "IPv4-mapped address"
    if ip in _NAT64:
        return IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64 address"
    if ip in _NAT64_LOCAL:
        return None, "local-use NAT64 address"
    if ip.sixtofour is not None:
        return ip.sixtofour, "6to4 address"
    if ip.teredo is not None:
        return None, "Teredo address"
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        return IPv4Address(int(ip) & 0xFFFFFFFF), "IPv4-compatible address"
    return None, None


def unwrap(ip: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address as the IPv4 address it is; others unchanged."""
    if isinstance(ip, IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True, slots=True)
class AllowEntry:
    network: IPNetwork
    port: int | None = None

    def matches(self, ip: IPAddress, port: int | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        return ip.version == self.network.version and ip in self.network

    def __str__(self) -> str:
        net = str(self.network)
        if self.network.num_addresses == 1:
            net = str(self.network.network_address)
        if self.port is None:
            return net
        return f"[{net}]:{self.port}" if self.network.version == 6 else f"{net}:{self.port}"


@dataclass(frozen=True, slots=True)
class Allowlist:
    """Addresses the operator opens despite the rules: ``10.0.0.0/8``, ``127.0.0.1:8765``,
    ``[::1]:9000``, ``fd00::/8``. Entries are IP networks, optionally with one port; host
    names are not accepted (a name is only as good as its next resolution)."""

    entries: tuple[AllowEntry, ...] = ()

    @classmethod
    def parse(cls, specs: Iterable[str]) -> Allowlist:
        return cls(tuple(_entry(spec.strip()) for spec in specs if spec.strip()))

    def allows(self, address: str | IPAddress, port: int | None = None) -> bool:
        ip = unwrap(ip_address(address) if isinstance(address, str) else address)
        return any(entry.matches(ip, port) for entry in self.entries)

    def __str__(self) -> str:
        return ", ".join(str(e) for e in self.entries) or "(empty)"


def _entry(spec: str) -> AllowEntry:
    """One allowlist entry; raises ``ValueError`` naming the entry."""
    try:
        host, port = spec, None
        if spec.startswith("["):
            host, _, rest = spec[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
            if rest and port is None:
                raise ValueError(spec)
        elif spec.count(":") == 1:
            host, text = spec.split(":")
            port = int(text)
        if port is not None and not 0 < port < 65536:
            raise ValueError(spec)
        network = ip_network(host, strict=False)
    except ValueError:
        raise ValueError(
            f"outbound allowlist entry {spec!r} is not an IP network with an optional port"
        ) from None
    if isinstance(network, IPv6Network) and network.num_addresses == 1:
        mapped = network.network_address.ipv4_mapped
        if mapped is not None:
            network = IPv4Network(mapped)
    return AllowEntry(network, port)
