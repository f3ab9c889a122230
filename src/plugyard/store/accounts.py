"""Connected-account rows: a user's account at an identity provider, its token material
sealed (ciphertext only: encryption lives in ``execution.identities``), its granted
scopes and target (the account's address) in the clear for listings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class AccountRow:
    owner: str
    provider: str
    target: str | None
    scopes: tuple[str, ...]
    nonce: bytes
    ciphertext: bytes
    key_id: str
    created_at: float
    updated_at: float


class AccountRepository(Protocol):
    def put(self, row: AccountRow) -> None: ...

    def get(self, owner: str, provider: str) -> AccountRow | None: ...

    def list(self, owner: str | None = None) -> list[AccountRow]: ...

    def delete(self, owner: str, provider: str) -> bool: ...


_COLUMNS = "owner, provider, target, scopes, nonce, ciphertext, key_id, created_at, updated_at"


class SqlAccountRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def put(self, row: AccountRow) -> None:
        values: dict[str, Any] = {
            "owner": row.owner,
            "provider": row.provider,
            "target": row.target,
            "scopes": json_in(list(row.scopes)),
            "nonce": row.nonce,
            "ciphertext": row.ciphertext,
            "key_id": row.key_id,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
        with self._db.write() as tx:
            tx.execute(
                f"INSERT INTO connected_accounts ({_COLUMNS}) VALUES (:owner, :provider, "
                ":target, :scopes, :nonce, :ciphertext, :key_id, :created_at, :updated_at) "
                "ON CONFLICT (owner, provider) DO UPDATE SET target = excluded.target, "
                "scopes = excluded.scopes, nonce = excluded.nonce, "
                "ciphertext = excluded.ciphertext, key_id = excluded.key_id, "
                "updated_at = excluded.updated_at",
                values,
            )

    def get(self, owner: str, provider: str) -> AccountRow | None:
        with self._db.read() as tx:
            found = tx.one(
                f"SELECT {_COLUMNS} FROM connected_accounts WHERE owner = :o AND provider = :p",
                {"o": owner, "p": provider},
            )
        return _row(found) if found is not None else None

    def list(self, owner: str | None = None) -> list[AccountRow]:
        where = "WHERE owner = :o " if owner is not None else ""
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_COLUMNS} FROM connected_accounts {where}ORDER BY owner, provider",
                {"o": owner},
            )
        return [_row(r) for r in rows]

    def delete(self, owner: str, provider: str) -> bool:
        with self._db.write() as tx:
            gone = tx.execute(
                "DELETE FROM connected_accounts WHERE owner = :o AND provider = :p",
                {"o": owner, "p": provider},
            )
        return gone == 1


def _row(found: tuple[Any, ...]) -> AccountRow:
    owner, provider, target, scopes, nonce, sealed, key_id, created, updated = found
    return AccountRow(
        owner,
        provider,
        target,
        tuple(json_out(scopes) or ()),
        bytes(nonce),
        bytes(sealed),
        key_id,
        float(created),
        float(updated),
    )
