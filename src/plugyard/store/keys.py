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

from sqlalchemy import func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from plugyard.store.schema import api_keys, api_subjects
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


class SqlKeyRepository:
    """Keys and subjects in the store's ``api_keys`` and ``api_subjects`` tables."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def create(
        self, subject: str, roles: tuple[str, ...] | None = None, *, label: str | None = None
    ) -> tuple[KeyInfo, str]:
        """A new key for ``subject`` (created if need be); ``roles`` set the subject's
        roles when given. Answers the key's listing and the key itself, the only time
        it is ever seen."""
        if not subject or len(subject) > 200:
            raise ValueError("a subject is 1 to 200 characters")
        with self._store.writing() as conn:
            held = self._roles(conn, subject)
            now = self._store.clock()
            if held is None:
                conn.execute(
                    insert(api_subjects).values(id=subject, roles=list(roles or ()), created_at=now)
                )
            elif roles is not None:
                conn.execute(
                    update(api_subjects)
                    .where(api_subjects.c.id == subject)
                    .values(roles=list(roles))
                )
            info, key = self._insert_key(conn, subject, label, now)
            final = tuple(roles) if roles is not None else tuple(held or ())
            return KeyInfo(info.id, subject, final, label, now), key

    def bootstrap_admin(self) -> str | None:
        """On a store that never had a key: make subject ``admin`` (role ``admin``) and
        one key for it, and answer the key. Otherwise ``None`` — so the first start
        prints it once and no later start ever does. Concurrent first starts make one."""
        with self._store.writing() as conn:
            if conn.execute(select(func.count()).select_from(api_keys)).scalar_one():
                return None
            now = self._store.clock()
            values = {"id": ADMIN_SUBJECT, "roles": [ADMIN_ROLE], "created_at": now}
            # RETURNING, not rowcount: psycopg answers -1 for an INSERT … ON CONFLICT, so
            # only the row coming back says this start made the subject.
            claim = _insert_ignore(conn).values(**values).on_conflict_do_nothing()
            if conn.execute(claim.returning(api_subjects.c.id)).first() is None:
                return None
            _, key = self._insert_key(conn, ADMIN_SUBJECT, "created on first start", now)
            return key

    def verify(self, key: str) -> Principal | None:
        """The principal of a valid, unrevoked key; ``None`` for anything else."""
        key_id = key_id_of(key)
        if key_id is None:
            return None
        query = (
            select(
                api_keys.c.key_hash, api_keys.c.revoked_at, api_keys.c.subject, api_subjects.c.roles
            )
            .join(api_subjects, api_subjects.c.id == api_keys.c.subject)
            .where(api_keys.c.id == key_id)
        )
        with self._store.reading() as conn:
            row = conn.execute(query).first()
        if row is None or row.revoked_at is not None:
            return None
        if not hmac.compare_digest(row.key_hash, key_hash(key)):
            return None
        return Principal(row.subject, tuple(row.roles or ()), key_id)

    def principal_of(self, key_id: str) -> Principal | None:
        """The principal of an unrevoked key, by its public id: for a web session that
        was opened with the key and keeps only its id (the key itself is never kept)."""
        query = (
            select(api_keys.c.revoked_at, api_keys.c.subject, api_subjects.c.roles)
            .join(api_subjects, api_subjects.c.id == api_keys.c.subject)
            .where(api_keys.c.id == key_id)
        )
        with self._store.reading() as conn:
            row = conn.execute(query).first()
        if row is None or row.revoked_at is not None:
            return None
        return Principal(row.subject, tuple(row.roles or ()), key_id)

    def list(self) -> tuple[KeyInfo, ...]:
        query = (
            select(api_keys, api_subjects.c.roles)
            .join(api_subjects, api_subjects.c.id == api_keys.c.subject)
            .order_by(api_keys.c.created_at, api_keys.c.id)
        )
        with self._store.reading() as conn:
            return tuple(
                KeyInfo(r.id, r.subject, tuple(r.roles or ()), r.label, r.created_at, r.revoked_at)
                for r in conn.execute(query)
            )

    def revoke(self, key_id: str) -> bool:
        """Revoke a key; ``False`` when there is no such unrevoked key."""
        with self._store.writing() as conn:
            done = conn.execute(
                update(api_keys)
                .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
                .values(revoked_at=self._store.clock())
            )
            return bool(done.rowcount)

    def _roles(self, conn: Connection, subject: str) -> tuple[str, ...] | None:
        row = conn.execute(select(api_subjects.c.roles).where(api_subjects.c.id == subject))
        found = row.first()
        return None if found is None else tuple(found.roles or ())

    def _insert_key(
        self, conn: Connection, subject: str, label: str | None, now: datetime
    ) -> tuple[KeyInfo, str]:
        key_id = secrets.token_hex(6)
        key = f"{PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
        values = {"id": key_id, "subject": subject, "key_hash": key_hash(key), "label": label}
        conn.execute(insert(api_keys).values(**values, created_at=now))
        return KeyInfo(key_id, subject, (), label, now), key


def _insert_ignore(conn: Connection) -> Any:
    if conn.dialect.name == "postgresql":
        return pg_insert(api_subjects)
    return sqlite_insert(api_subjects)
