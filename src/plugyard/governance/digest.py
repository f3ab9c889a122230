"""The digest of one exact request: what approvals and idempotency keys are bound to."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import msgspec

_encode = msgspec.json.Encoder(order="sorted").encode


def canonical(value: Any) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8."""
    return _encode(value)


def request_digest(
    plugin_id: str, operation: str, params: Mapping[str, Any], subject: str | None
) -> str:
    """SHA-256 of the plugin, operation, canonical parameters and subject."""
    body = canonical(
        {"plugin": plugin_id, "operation": operation, "params": params, "subject": subject}
    )
    return hashlib.sha256(body).hexdigest()
