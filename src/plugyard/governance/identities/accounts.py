"""Connected accounts: a user's account at an identity provider, its token material
sealed like a secret (AES-256-GCM, key derived from the secrets master key, associated
data ``owner ‖ provider``: a row moved to another user does not decrypt). Listings show
the provider, target and scopes — never a token.
"""

from __future__ import annotations

import json
import secrets as random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from plugyard.errors import GovernanceError
from plugyard.governance.secrets.keys import key_id
from plugyard.governance.secrets.vault import Redactor
from plugyard.store.accounts import AccountRepository, AccountRow


@dataclass(frozen=True, slots=True)
class Account:
    """What any API may show about a connected account."""

    owner: str
    provider: str
    target: str | None
    scopes: tuple[str, ...]
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "provider": self.provider,
            "target": self.target,
            "scopes": list(self.scopes),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


class AccountVault:
    def __init__(
        self,
        repository: AccountRepository,
        master_key: bytes,
        redactor: Redactor,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repository = repository
        self._redactor = redactor
        self._key_id = key_id(master_key)
        derived = HKDF(hashes.SHA256(), 32, salt=None, info=b"plugyard accounts v1").derive(
            master_key
        )
        self._aead = AESGCM(derived)
        self._clock = clock

    def connect(
        self,
        owner: str,
        provider: str,
        *,
        scopes: Sequence[str],
        target: str | None = None,
        material: dict[str, Any],
    ) -> Account:
        if not owner or not provider:
            raise GovernanceError("an account needs its owner and provider", code="invalid_request")
        now = self._clock()
        nonce = random.token_bytes(12)
        sealed = self._aead.encrypt(nonce, json.dumps(material).encode(), _aad(owner, provider))
        row = AccountRow(
            owner, provider, target, tuple(scopes), nonce, sealed, self._key_id, now, now
        )
        self.repository.put(row)
        for value in material.values():
            if isinstance(value, str):
                self._redactor.track(value)
        return _public(self.repository.get(owner, provider) or row)

    def disconnect(self, owner: str, provider: str) -> bool:
        return self.repository.delete(owner, provider)

    def list(self, owner: str | None = None) -> list[Account]:
        return [_public(r) for r in self.repository.list(owner)]

    def find(self, owner: str | None, provider: str) -> Account | None:
        row = self.repository.get(owner, provider) if owner else None
        return _public(row) if row is not None else None

    def material(self, owner: str, provider: str) -> dict[str, Any]:
        row = self.repository.get(owner, provider)
        if row is None:
            return {}
        try:
            plain = self._aead.decrypt(row.nonce, row.ciphertext, _aad(row.owner, row.provider))
        except InvalidTag:
            raise GovernanceError(
                f"the {provider} account cannot be decrypted", code="secrets_key_error"
            ) from None
        found: dict[str, Any] = json.loads(plain)
        for value in found.values():
            if isinstance(value, str):
                self._redactor.track(value)
        return found


def _aad(owner: str, provider: str) -> bytes:
    return b"plugyard-account-v1\x00" + f"{owner}\x00{provider}".encode()


def _public(row: AccountRow) -> Account:
    return Account(row.owner, row.provider, row.target, row.scopes, row.created_at, row.updated_at)
