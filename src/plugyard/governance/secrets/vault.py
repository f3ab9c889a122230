"""Secrets: AES-256-GCM at rest, bound to scope, owner and name; never returned by any
API, and scrubbed from what leaves a call.

The associated data of each ciphertext is ``scope ‖ owner ‖ name``: a row copied or
moved to another owner, scope or name fails to decrypt (``secrets_key_error``) rather
than handing one user's secret to another. The master key lives outside the database
(:mod:`plugyard.governance.secrets.keys`); the cipher key is derived from it with HKDF.

Reads fall back from the user's secret to the system's (``system_or_user``, the Shu
default); ``user`` and ``system`` scopes read only their own.
"""

from __future__ import annotations

import base64
import re
import secrets as random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, quote_plus

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from plugyard.errors import GovernanceError
from plugyard.governance.secrets.keys import key_id
from plugyard.store.secrets import SecretRepository, SecretRow

Scope = Literal["user", "system"]
REDACTED = "[REDACTED]"
_MAX_VALUE = 64 * 1024


@dataclass(frozen=True, slots=True)
class SecretInfo:
    """What any API may show about a secret: never its value."""

    scope: str
    owner: str | None
    name: str
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "owner": self.owner,
            "name": self.name,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


class Redactor:
    """Replaces known secret values — plain, base64, hex, URL-encoded — with
    ``[REDACTED]``. Values shorter than ``min_length`` are not tracked (they would
    scrub ordinary words)."""

    def __init__(self, min_length: int = 6) -> None:
        self._min = min_length
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        self.on_arm: Callable[[], None] | None = None

    @property
    def armed(self) -> bool:
        return self._pattern is not None

    def track(self, value: str) -> None:
        if len(value) < self._min or value in self._values:
            return
        with self._lock:
            first = not self._values
            self._values.add(value)
            variants = {v for s in self._values for v in _variants(s) if len(v) >= self._min}
            ordered = sorted(variants, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
        if first and self.on_arm is not None:
            self.on_arm()

    def scrub(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None else pattern.sub(REDACTED, text)

    def found_in(self, text: str) -> bool:
        pattern = self._pattern
        return pattern is not None and pattern.search(text) is not None

    def scrub_data(self, value: Any) -> Any:
        """``value`` with every string (keys included) scrubbed."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {self.scrub_data(k): self.scrub_data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.scrub_data(v) for v in value)
        return value


def _variants(value: str) -> Iterable[str]:
    """What a plugin might turn a secret into before it leaves: the value and its
    reversal, each plain, base64 (standard and URL-safe, padded or not), hex and
    URL-encoded, and for longer values their aligned pieces (see :func:`_pieces`)."""
    for text in (value, value[::-1]):
        yield from _encodings(text)
        yield from _pieces(text)


def _encodings(value: str) -> Iterable[str]:
    raw = value.encode("utf-8")
    yield value
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        yield text
        yield text.rstrip("=")
    yield raw.hex()
    yield raw.hex().upper()
    yield quote(value, safe="")
    yield quote_plus(value)


#: Secrets shorter than this are not cut into pieces (a piece would be a common word).
_PIECES_FROM = 16


def _pieces(value: str) -> Iterable[str]:
    """A secret split into parts must not leave whole either. The value is cut into
    aligned pieces of ``c`` characters (``c`` a sixth of it, 8 to 32): any part of at
    least ``2c - 1`` characters holds a whole piece, so each half of a value cut in two
    is caught, and the pattern stays small even for a long key file."""
    if len(value) < _PIECES_FROM:
        return
    size = max(8, min(32, len(value) // 6))
    for start in range(0, len(value) - size + 1, size):
        yield value[start : start + size]


class SecretVault:
    def __init__(
        self,
        repository: SecretRepository,
        master_key: bytes,
        *,
        redactor: Redactor | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repository = repository
        self.redactor = redactor or Redactor()
        self._key_id = key_id(master_key)
        derived = HKDF(hashes.SHA256(), 32, salt=None, info=b"plugyard secrets v1").derive(
            master_key
        )
        self._aead = AESGCM(derived)
        self._clock = clock

    # ------------------------------------------------------------------ administration

    def set(
        self, name: str, value: str, *, scope: Scope = "system", owner: str | None = None
    ) -> SecretInfo:
        owner_key = _owner(scope, owner)
        _check_name(name)
        if not isinstance(value, str) or not value or len(value) > _MAX_VALUE:
            raise GovernanceError(
                f"a secret value is 1 to {_MAX_VALUE} characters", code="invalid_request"
            )
        nonce = random.token_bytes(12)
        sealed = self._aead.encrypt(nonce, value.encode("utf-8"), _aad(scope, owner_key, name))
        now = self._clock()
        self.repository.put(
            SecretRow(scope, owner_key, name, nonce, sealed, self._key_id, now, now)
        )
        self.redactor.track(value)
        return SecretInfo(scope, owner_key or None, name, now, now)

    def delete(self, name: str, *, scope: Scope = "system", owner: str | None = None) -> bool:
        return self.repository.delete(scope, _owner(scope, owner), name)

    def list(self, *, scope: Scope | None = None, owner: str | None = None) -> list[SecretInfo]:
        rows = self.repository.list(scope, owner)
        return [
            SecretInfo(r.scope, r.owner or None, r.name, r.created_at, r.updated_at) for r in rows
        ]

    # ------------------------------------------------------------------ reading

    def present(self, name: str, subject: str | None, allowed: str = "system_or_user") -> bool:
        """Whether ``name`` is configured for ``subject`` under ``allowed`` scope."""
        return self._row(name, subject, allowed) is not None

    def resolve(
        self, name: str, subject: str | None, allowed: str = "system_or_user"
    ) -> str | None:
        """The value for ``subject``: the user's, else (``system_or_user``) the system's."""
        row = self._row(name, subject, allowed)
        if row is None:
            return None
        try:
            value = self._aead.decrypt(
                row.nonce, row.ciphertext, _aad(row.scope, row.owner, row.name)
            ).decode("utf-8")
        except InvalidTag:
            why = "another master key" if row.key_id != self._key_id else "a row moved or altered"
            raise GovernanceError(
                f"the secret {name!r} cannot be decrypted ({why})", code="secrets_key_error"
            ) from None
        self.redactor.track(value)
        return value

    def _row(self, name: str, subject: str | None, allowed: str) -> SecretRow | None:
        if allowed in ("user", "system_or_user") and subject:
            found = self.repository.get("user", subject, name)
            if found is not None:
                return found
        if allowed in ("system", "system_or_user"):
            return self.repository.get("system", "", name)
        return None


def _aad(scope: str, owner: str, name: str) -> bytes:
    return b"plugyard-secret-v1\x00" + "\x00".join((scope, owner, name)).encode("utf-8")


def _owner(scope: str, owner: str | None) -> str:
    if scope == "system":
        if owner:
            raise GovernanceError("a system secret has no owner", code="invalid_request")
        return ""
    if scope != "user" or not owner:
        raise GovernanceError("a user secret needs its owner", code="invalid_request")
    return owner


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,200}", name or ""):
        raise GovernanceError(f"not a secret name: {name!r}", code="invalid_request")
