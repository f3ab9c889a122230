"""Idempotency: a key is claimed before the call runs; a retry gets the stored result.

The key is scoped to the subject (two users' ``key-1`` are different keys) and bound to
the request digest: the same key with other parameters — or another plugin or
operation — is ``idempotency_conflict``. A call that claimed a key and never finished
(the process died, the call timed out or was cancelled) leaves it ``unknown``: a retry
answers ``idempotency_unknown`` and nothing runs again, because a write may have
happened. Only a *read* whose claim is older than the lease is taken over and run again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.store.idempotency import IdempotencyRepository, IdempotencyRow, KeyState
from plugyard.store.rawdb import Extra


@dataclass(frozen=True, slots=True)
class Claim:
    """This call holds the key: run, then :meth:`IdempotencyLedger.complete`."""

    key: str


@dataclass(frozen=True, slots=True)
class Replay:
    """The key's call finished before: answer its stored result envelope."""

    result: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    message: str


def scoped_key(subject: str | None, key: str) -> str:
    return hashlib.sha256(f"{subject or ''}\x00{key}".encode("utf-8", "surrogatepass")).hexdigest()


class IdempotencyLedger:
    def __init__(
        self,
        repository: IdempotencyRepository,
        *,
        lease_s: float = 600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repository = repository
        self._lease_s = lease_s
        self._clock = clock

    def claim(
        self,
        *,
        subject: str | None,
        key: str,
        digest: str,
        plugin_id: str,
        operation: str,
        request_id: str | None,
        read_only: bool,
    ) -> Claim | Replay | Refusal:
        if not key or len(key) > 255:
            return Refusal("invalid_request", "an idempotency key has 1 to 255 characters")
        scoped = scoped_key(subject, key)
        now = self._clock()
        row = IdempotencyRow(
            scoped, digest, subject, plugin_id, operation, "claimed", now, request_id=request_id
        )
        held = self.repository.claim(row)
        if held is None:
            return Claim(scoped)
        if held.request_digest != digest:
            return Refusal(
                "idempotency_conflict",
                "this idempotency key was used with other parameters or another operation",
            )
        if held.state == "done" and isinstance(held.result, Mapping):
            return Replay(held.result)
        if (
            held.state == "claimed"
            and read_only
            and self.repository.take_over(scoped, now - self._lease_s, now)
        ):
            return Claim(scoped)
        state = "in progress or interrupted" if held.state == "claimed" else "unknown"
        return Refusal(
            "idempotency_unknown",
            f"an earlier call with this key is {state}; it is not run again",
        )

    def complete(self, claim: Claim, state: KeyState, result: Mapping[str, Any] | None) -> None:
        self.repository.complete(claim.key, state, result, self._clock())

    def completion(self, claim: Claim, state: KeyState, result: Mapping[str, Any] | None) -> Extra:
        """:meth:`complete` as a statement for another write's transaction."""
        return self.repository.completion(claim.key, state, result, self._clock())

    def release(self, claim: Claim) -> None:
        """The call stopped before the plugin ran: free the key for a retry."""
        self.repository.release(claim.key)
