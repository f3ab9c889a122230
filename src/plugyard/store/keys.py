"""API keys of the service, kept hashed, each standing for a subject with roles.

A key reads ``pyk_<id>_<secret>``: the id is public (it names the key in listings and
revocations), the secret is 32 random bytes. Only the SHA-256 of the whole key is
stored. A fast hash is enough here, unlike for passwords: a 256-bit random secret
cannot be guessed from a dictionary, so slowing each check down would buy nothing and
cost every request. Revoked keys stay as rows (never reused, still listed).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from plugyard.store.rawdb import RawDb, Tx, json_in, json_out, raw_db, time_in, time_out
from plugyard.types import ADMIN_ROLE

if TYPE_CHECKING:
    from plugyard.store.store import Store

PREFIX = "pyk"
ADMIN_SUBJECT = "admin"
_KEY = re.compile(rf"^{PREFIX}_([0-9a-f]{{12}})_([A-Za-z0-9_-]{{20,100}})$")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a verified key stands for."""

    subject: str
    roles: tuple[str, ...] = ()
    key_id: str | None = None

    @property
    def admin(self) -> bool:
        return ADMIN_ROLE in self.roles


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """A key as listings show it: everything but the key."""

    id: str
    subject: str
    roles: tuple[str, ...]
    label: str | None
    created_at: datetime
    revoked_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "roles": list(self.roles),
            "label": self.label,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id_of(key: str) -> str | None:
    """The id part of a well-formed key, else ``None``."""
    found = _KEY.match(key)
    return found.group(1) if found else None


_JOINED = "FROM api_keys JOIN api_subjects ON api_subjects.id = api_keys.subject"


class SqlKeyRepository:
    """Keys and subjects in the store's ``api_keys`` and ``api_subjects`` tables."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._db: RawDb = raw_db(store)

    def create(
        self, subject: str, roles: tuple[str, ...] | None = None, *, label: str | None = None
    ) -> tuple[KeyInfo, str]:
        """A new key for ``subject`` (created if need be); ``roles`` set the subject's
        roles when given. Answers the key's listing and the key itself, the only time
        it is ever seen."""
        if not subject or len(subject) > 200:
            raise ValueError("a subject is 1 to 200 characters")
        with self._db.write() as tx:
            held = self._roles(tx, subject)
            now = self._store.clock()
            if held is None:
                tx.execute(
                    "INSERT INTO api_subjects (id, roles, created_at) VALUES (:id, :roles, :at)",
                    {"id": subject, "roles": json_in(list(roles or ())), "at": self._utc(now)},
                )
            elif roles is not None:
                tx.execute(
                    "UPDATE api_subjects SET roles = :roles WHERE id = :id",
                    {"id": subject, "roles": json_in(list(roles))},
                )
            info, key = self._insert_key(tx, subject, label, now)
        final = tuple(roles) if roles is not None else tuple(held or ())
        return KeyInfo(info.id, subject, final, label, now), key

    def bootstrap_admin(self) -> str | None:
        """On a store that never had a key: make subject ``admin`` (role ``admin``) and
        one key for it, and answer the key. Otherwise ``None`` — so the first start
        prints it once and no later start ever does. Concurrent first starts make one."""
        with self._db.write() as tx:
            counted = tx.one("SELECT count(*) FROM api_keys")
            if counted is not None and counted[0]:
                return None
            now = self._store.clock()
            # Of concurrent first starts, the one whose insert lands makes the key.
            made = tx.execute(
                "INSERT INTO api_subjects (id, roles, created_at) VALUES (:id, :roles, :at) "
                "ON CONFLICT (id) DO NOTHING",
                {"id": ADMIN_SUBJECT, "roles": json_in([ADMIN_ROLE]), "at": self._utc(now)},
            )
            if made != 1:
                return None
            _, key = self._insert_key(tx, ADMIN_SUBJECT, "created on first start", now)
        return key

    def verify(self, key: str) -> Principal | None:
        """The principal of a valid, unrevoked key; ``None`` for anything else."""
        key_id = key_id_of(key)
        if key_id is None:
            return None
        with self._db.read() as tx:
            found = tx.one(
                "SELECT api_keys.key_hash, api_keys.revoked_at, api_keys.subject, "
                f"api_subjects.roles {_JOINED} WHERE api_keys.id = :id",
                {"id": key_id},
            )
        if found is None or found[1] is not None:
            return None
        stored_hash, _, subject, roles = found
        if not hmac.compare_digest(stored_hash, key_hash(key)):
            return None
        return Principal(subject, tuple(json_out(roles) or ()), key_id)

    def principal_of(self, key_id: str) -> Principal | None:
        """The principal of an unrevoked key, by its public id: for a web session that
        was opened with the key and keeps only its id (the key itself is never kept)."""
        with self._db.read() as tx:
            found = tx.one(
                f"SELECT api_keys.revoked_at, api_keys.subject, api_subjects.roles {_JOINED} "
                "WHERE api_keys.id = :id",
                {"id": key_id},
            )
        if found is None or found[0] is not None:
            return None
        return Principal(found[1], tuple(json_out(found[2]) or ()), key_id)

    def list(self) -> tuple[KeyInfo, ...]:
        with self._db.read() as tx:
            found = tx.all(
                "SELECT api_keys.id, api_keys.subject, api_subjects.roles, api_keys.label, "
                f"api_keys.created_at, api_keys.revoked_at {_JOINED} "
                "ORDER BY api_keys.created_at, api_keys.id"
            )
        return tuple(
            KeyInfo(
                i,
                s,
                tuple(json_out(r) or ()),
                label,
                time_out(c),
                None if revoked is None else time_out(revoked),
            )
            for i, s, r, label, c, revoked in found
        )

    def revoke(self, key_id: str) -> bool:
        """Revoke a key; ``False`` when there is no such unrevoked key."""
        with self._db.write() as tx:
            done = tx.execute(
                "UPDATE api_keys SET revoked_at = :at WHERE id = :id AND revoked_at IS NULL",
                {"id": key_id, "at": self._utc(self._store.clock())},
            )
        return done == 1

    def _roles(self, tx: Tx, subject: str) -> tuple[str, ...] | None:
        found = tx.one("SELECT roles FROM api_subjects WHERE id = :id", {"id": subject})
        return None if found is None else tuple(json_out(found[0]) or ())

    def _insert_key(
        self, tx: Tx, subject: str, label: str | None, now: datetime
    ) -> tuple[KeyInfo, str]:
        key_id = secrets.token_hex(6)
        key = f"{PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
        tx.execute(
            "INSERT INTO api_keys (id, subject, key_hash, label, created_at) "
            "VALUES (:id, :subject, :hash, :label, :at)",
            {
                "id": key_id,
                "subject": subject,
                "hash": key_hash(key),
                "label": label,
                "at": self._utc(now),
            },
        )
        return KeyInfo(key_id, subject, (), label, now), key

    def _utc(self, value: datetime) -> Any:
        return time_in(value, self._db.postgres)
