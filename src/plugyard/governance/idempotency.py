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

from plugyard.execution.result import Result
from plugyard.execution.steps import NOTHING, Call, refuse
from plugyard.governance.approvals import call_digest
from plugyard.governance.host.services import EFFECTS, Effects
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import ErrorInfo, Outcome
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


# ------------------------------------------------------------------ the call path's steps

#: Per-call slots: the key this call holds; what ``complete`` hands the audit step (the
#: completion to write in the audit event's transaction, a detail for the event).
CLAIM = "idempotency"
COMPLETION = "complete"
DETAIL = "complete.detail"

#: Ends after which nobody knows whether the plugin's side effect happened: the key is
#: left "unknown", so a retry is refused rather than run twice.
_UNKNOWN = frozenset({"cancelled", "worker_lost"})
#: Runtimes whose work ends with its call: a subprocess request given up is cancelled
#: or its worker killed, and host calls naming it are no longer served.
_STOPPED_AT_DEADLINE = frozenset({"subprocess"})


class IdempotencyStep:
    """An idempotency key is claimed atomically; a finished key replays its stored result,
    the same key with other parameters is ``idempotency_conflict``, an unfinished one
    ``idempotency_unknown``."""

    name = "idempotency"
    after = NOTHING

    def __init__(self, ledger: IdempotencyLedger) -> None:
        self.ledger = ledger

    def before(self, call: Call) -> Outcome | None:
        context = call.context
        if context.idempotency_key is None:
            return None
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        found = self.ledger.claim(
            subject=context.subject,
            key=context.idempotency_key,
            digest=call_digest(call),
            plugin_id=plugin.id,
            operation=operation.id,
            request_id=context.request_id,
            read_only=operation.effect == "read" and operation.kind == "call",
        )
        if isinstance(found, Refusal):
            return refuse(found.code, found.message)
        if isinstance(found, Replay):
            return _replay(found.result)
        call.state[CLAIM] = found
        return None


class CompleteStep:
    """On the way out, the key this call holds: released when the plugin never ran,
    ``unknown`` after a timeout or cancellation, ``done`` with the result otherwise.

    A call that ended without an answer releases its key too when plugyard knows nothing
    landed: its work was stopped (a subprocess request is given up, its later host calls
    refused), it could act only through the host (untrusted, so sandboxed; or a
    read-only operation), and its :class:`~plugyard.governance.host.services.Effects`
    ledger recorded no write. The completion is handed to the audit step, to commit in
    the audit event's transaction."""

    name = "complete"
    before = NOTHING

    def __init__(self, ledger: IdempotencyLedger) -> None:
        self.ledger = ledger

    def after(self, call: Call, result: Result) -> Result:
        effects: Effects | None = call.state.get(EFFECTS)
        landed = effects.close() if effects is not None else None
        claim: Claim | None = call.state.get(CLAIM)
        if claim is None:
            return result
        if not call.dispatched:
            self.ledger.release(claim)
        elif result.status == "timeout" or (result.error and result.error.code in _UNKNOWN):
            if _confined(call) and landed == ():
                # Stopped, and nothing it did landed: as if it never ran.
                self.ledger.release(claim)
                call.state[DETAIL] = {
                    "idempotency": "released",
                    "reason": "stopped; nothing landed",
                }
            else:
                call.state[COMPLETION] = self.ledger.completion(claim, "unknown", None)
        else:
            call.state[COMPLETION] = self.ledger.completion(claim, "done", result.to_dict())
        return result


def _confined(call: Call) -> bool:
    """Stopped at its deadline and able to act only through the host."""
    plugin, operation = call.plugin, call.operation
    assert plugin is not None and operation is not None
    return plugin.descriptor.runtime.kind in _STOPPED_AT_DEADLINE and (
        plugin.trust == "untrusted" or _declared_read_only(operation)
    )


def _declared_read_only(operation: Operation) -> bool:
    """Read-only by the plugin's own word, not by the default of an undeclared effect."""
    return (
        operation.effect == "read"
        and operation.kind == "call"
        and "effect" in operation.model_fields_set
    )


def _replay(stored: Mapping[str, Any]) -> Outcome:
    error = stored.get("error")
    info = ErrorInfo(error["code"], error["message"], error.get("details") or {}) if error else None
    return Outcome(
        status=str(stored.get("status", "success")),
        data=stored.get("data"),
        error=info,
        cost={k: v for k, v in (stored.get("cost") or {}).items() if k != "duration_ms"},
        diagnostics=("replayed: the stored result of an earlier call with this idempotency key",),
        skips=tuple(stored.get("skips") or ()),
        citations=tuple(stored.get("citations") or ()),
        next_cursor=stored.get("next_cursor"),
    )
