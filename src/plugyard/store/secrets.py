"""Secret rows: ciphertext only. Encryption lives in ``execution.secrets``; this layer
never sees a plaintext value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, matching, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class SecretRow:
    scope: str  # "user" or "system"
    owner: str  # the user id; "" for system secrets
    name: str
    nonce: bytes
    ciphertext: bytes
    key_id: str
    created_at: float
    updated_at: float


class SecretRepository(Protocol):
    def put(self, row: SecretRow) -> None:
        """Insert or replace (keeping ``created_at`` of a replaced row)."""
        ...

    def get(self, scope: str, owner: str, name: str) -> SecretRow | None: ...

    def list(self, scope: str | None = None, owner: str | None = None) -> list[SecretRow]: ...

    def delete(self, scope: str, owner: str, name: str) -> bool: ...


_COLUMNS = "scope, owner, name, nonce, ciphertext, key_id, created_at, updated_at"


class SqlSecretRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def put(self, row: SecretRow) -> None:
        values: dict[str, Any] = {
            "scope": row.scope,
            "owner": row.owner,
            "name": row.name,
            "nonce": row.nonce,
            "ciphertext": row.ciphertext,
            "key_id": row.key_id,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO secrets ({_COLUMNS}) VALUES (:scope, :owner, :name, :nonce, "
                ":ciphertext, :key_id, :created_at, :updated_at) "
                "ON CONFLICT (scope, owner, name) DO UPDATE SET nonce = excluded.nonce, "
                "ciphertext = excluded.ciphertext, key_id = excluded.key_id, "
                "updated_at = excluded.updated_at",
                values,
            )

    def get(self, scope: str, owner: str, name: str) -> SecretRow | None:
        with self._db.read() as tx:
            found = tx.one(
                f"SELECT {_COLUMNS} FROM secrets WHERE scope = :s AND owner = :o AND name = :n",
                {"s": scope, "o": owner, "n": name},
            )
        return _row(found) if found is not None else None

    def list(self, scope: str | None = None, owner: str | None = None) -> list[SecretRow]:
        where, values = matching(scope=scope, owner=owner)
        with self._db.read() as tx:
            rows = tx.all(f"SELECT {_COLUMNS} FROM secrets{where} ORDER BY scope, owner, name",
                          values)  # fmt: skip
        return [_row(r) for r in rows]

    def delete(self, scope: str, owner: str, name: str) -> bool:
        with self._db.write() as tx:
            gone = tx.execute(
                "DELETE FROM secrets WHERE scope = :s AND owner = :o AND name = :n",
                {"s": scope, "o": owner, "n": name},
            )
        return gone == 1


def _row(found: tuple[Any, ...]) -> SecretRow:
    scope, owner, name, nonce, ciphertext, key_id, created, updated = found
    return SecretRow(scope, owner, name, bytes(nonce), bytes(ciphertext), key_id, created, updated)
