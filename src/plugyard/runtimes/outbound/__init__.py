"""Outbound HTTP under one guard: every connection plugyard opens to a URL it was given
(an external plugin's calls and health checks, and later ``host.http``) is checked
against the address the socket actually connects to — not the URL's text."""

from plugyard.runtimes.outbound.addresses import Allowlist, blocked_reason
from plugyard.runtimes.outbound.client import OutboundClient, OutboundError, Reply
from plugyard.runtimes.outbound.guard import BlockedAddress, OutboundGuard

__all__ = [
    "Allowlist",
    "BlockedAddress",
    "OutboundClient",
    "OutboundError",
    "OutboundGuard",
    "Reply",
    "blocked_reason",
]
