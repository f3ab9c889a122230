"""Console sessions: a random id in the cookie, everything else on the server.

Logging in with an API key opens a session that remembers the key's public *id*, never
the key: each page asks the key store again whether that id is still unrevoked, so a
revoked key ends its sessions at once. The id in the cookie is 256 random bits and only
its SHA-256 is stored, so a copy of the database opens no session. Sessions live in the
store (the ``plugin_kv`` table), so every replica over the same store knows them and a
restart keeps them.

Each session has its own CSRF token, checked on every form post, and holds the approval
receipts of the actions its user asked for (so "run it now" after an approval needs no
copy-and-paste of a receipt).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from plugyard.store.kv import KeyValueRepository

#: The kv table's owner column for sessions: a plugin id can never contain a space
#: (manifest.model.Identifier), so no plugin's own storage can read or clash with these.
OWNER = " console"
NAMESPACE = "session"
TTL_S = 8 * 3600
#: Receipts kept per session: enough for a day's requests, bounded against a flood.
MAX_PENDING = 50


@dataclass(frozen=True, slots=True)
class Session:
    """One signed-in browser: whose key it was opened with, and its CSRF token."""

    key_id: str
    subject: str
    csrf: str
    expires_at: float
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "subject": self.subject,
            "csrf": self.csrf,
            "expires_at": self.expires_at,
            "pending": self.pending,
        }

    @classmethod
    def of(cls, data: Any) -> Session | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                str(data["key_id"]),
                str(data["subject"]),
                str(data["csrf"]),
                float(data["expires_at"]),
                dict(data.get("pending") or {}),
            )
        except (KeyError, TypeError, ValueError):
            return None


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    """Constant-time equality of two tokens (``None`` never matches)."""
    return a is not None and b is not None and hmac.compare_digest(a, b)


class SessionStore:
    def __init__(
        self,
        kv: KeyValueRepository,
        *,
        ttl_s: float = TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._kv = kv
        self._ttl = ttl_s
        self._clock = clock

    def open(self, key_id: str, subject: str) -> tuple[str, Session]:
        """A new session and the id its cookie carries (shown only here)."""
        self._sweep()
        session_id = secrets.token_urlsafe(32)
        now = self._clock()
        session = Session(key_id, subject, secrets.token_urlsafe(32), now + self._ttl)
        self._kv.put(OWNER, NAMESPACE, _digest(session_id), session.to_data(), now)
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of a cookie's id, else ``None``."""
        if not session_id or len(session_id) > 200:
            return None
        found = Session.of(self._kv.get(OWNER, NAMESPACE, _digest(session_id)))
        if found is None or found.expires_at <= self._clock():
            return None
        return found

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._kv.delete(OWNER, NAMESPACE, _digest(session_id))

    def remember(self, session_id: str, session: Session, action_id: str, held: Any) -> None:
        """Keep what it takes to run an approved action later (its receipt, the call)."""
        pending = dict(session.pending)
        pending[action_id] = held
        while len(pending) > MAX_PENDING:
            pending.pop(next(iter(pending)))
        self._save(session_id, replace(session, pending=pending))

    def forget(self, session_id: str, session: Session, action_id: str) -> None:
        pending = {k: v for k, v in session.pending.items() if k != action_id}
        self._save(session_id, replace(session, pending=pending))

    def _save(self, session_id: str, session: Session) -> None:
        self._kv.put(OWNER, NAMESPACE, _digest(session_id), session.to_data(), self._clock())

    def _sweep(self) -> None:
        """Drop expired sessions; done at each login, so the table stays small."""
        now = self._clock()
        for key, data in self._kv.items(OWNER, NAMESPACE).items():
            found = Session.of(data)
            if found is None or found.expires_at <= now:
                self._kv.delete(OWNER, NAMESPACE, key)
