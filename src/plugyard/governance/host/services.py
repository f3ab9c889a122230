"""The host capabilities governance lends a plugin (Shu ``capabilities``).

Each is a small object scoped to one plugin — and, for ``secrets`` and ``identity``, to
one caller. Which of them a plugin gets is decided by its manifest, in
:class:`~plugyard.execution.host.Host`; what each may reach is decided here:

- ``secrets.get(name)``: only names the manifest declares (``secrets``, ``op_auth``),
  user → system fallback;
- ``storage``, ``cursor``: values in the store, per plugin (``cursor`` per source);
- ``rate_limit.limit(bucket, cost)``: a token bucket per plugin and bucket;
- ``identity.lookup(kind)``, ``get_current_user_identity()``: the caller's identities as
  the surface vouched for them;
- ``audit.record(event, **detail)``: an event in the durable chain, attributed;
- ``scheduler.enqueue(operation, params, run_at)`` (or the seed's ``enqueue(task,
  run_at)``): a one-shot feed run as the caller;
- ``http.fetch(url, …)``: through the outbound guard, to hosts on the plugin's egress
  allowlist only.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import msgspec

from plugyard.execution.host import CapabilityError
from plugyard.governance.policy.rbac import wildcard_match
from plugyard.governance.secrets.vault import Redactor, SecretVault
from plugyard.store.feeds import FeedRepository, FeedRow
from plugyard.store.kv import KeyValueRepository


class SecretsView:
    def __init__(
        self, vault: SecretVault, subject: str | None, declared: Mapping[str, str]
    ) -> None:
        self._vault = vault
        self._subject = subject
        self._declared = declared  # name → allowed scope
        self.used = False

    def get(self, name: str, default: str | None = None) -> str | None:
        allowed = self._declared.get(name)
        if allowed is None:
            raise CapabilityError(
                f"the secret {name!r} is not declared by the plugin", code="capability_not_granted"
            )
        self.used = True
        found = self._vault.resolve(name, self._subject, allowed)
        return default if found is None else found

    def has(self, name: str) -> bool:
        allowed = self._declared.get(name)
        return allowed is not None and self._vault.present(name, self._subject, allowed)


class Storage:
    """``storage.put/get(reference)``: JSON values kept per plugin."""

    def __init__(self, kv: KeyValueRepository, plugin_id: str, namespace: str = "storage") -> None:
        self._kv, self._plugin, self._ns = kv, plugin_id, namespace

    def get(self, key: str, default: Any = None, *, namespace: str | None = None) -> Any:
        found = self._kv.get(self._plugin, self._ns, _spaced(key, namespace))
        return default if found is None else found

    def put(self, key: str, value: Any, *, namespace: str | None = None) -> None:
        self._kv.put(self._plugin, self._ns, _spaced(key, namespace), value, time.time())

    set = put

    def delete(self, key: str, *, namespace: str | None = None) -> bool:
        return self._kv.delete(self._plugin, self._ns, _spaced(key, namespace))

    def keys(self) -> list[str]:
        return list(self._kv.items(self._plugin, self._ns))


def _spaced(key: str, namespace: str | None) -> str:
    """Shu's optional ``namespace=`` of a storage key: a prefix inside the plugin's own."""
    return key if namespace is None else f"{namespace}/{key}"


class Cursor:
    """``cursor.get(source)`` / ``cursor.set(source, value)``: incremental-sync cursors."""

    def __init__(self, kv: KeyValueRepository, plugin_id: str) -> None:
        self._kv, self._plugin = kv, plugin_id

    def get(self, source: str = "default", default: Any = None) -> Any:
        found = self._kv.get(self._plugin, "cursor", source)
        return default if found is None else found

    def set(self, source: str, value: Any) -> None:
        self._kv.put(self._plugin, "cursor", source, value, time.time())

    def delete(self, source: str = "default") -> bool:
        return self._kv.delete(self._plugin, "cursor", source)


class RateLimit:
    """Token buckets of ``capacity`` tokens refilled at ``per_second``; in process memory
    (a limit per replica)."""

    def __init__(
        self,
        plugin_id: str,
        capacity: float = 60.0,
        per_second: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._plugin, self._capacity, self._rate, self._clock = (
            plugin_id,
            capacity,
            per_second,
            clock,
        )
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def try_acquire(self, bucket: str = "default", cost: float = 1.0) -> bool:
        with self._lock:
            now = self._clock()
            tokens, then = self._buckets.get(bucket, (self._capacity, now))
            tokens = min(self._capacity, tokens + (now - then) * self._rate)
            if tokens < cost:
                self._buckets[bucket] = (tokens, now)
                return False
            self._buckets[bucket] = (tokens - cost, now)
            return True

    def limit(self, bucket: str = "default", cost: float = 1.0) -> None:
        if not self.try_acquire(bucket, cost):
            raise CapabilityError(f"rate limit of bucket {bucket!r} reached", code="rate_limited")


class Identity:
    """``identity.lookup(kind)``: the caller's linked identities as the surface vouched
    for them (:attr:`CallContext.identities`) — never the body's ``user_context``, which
    any client can fill with someone else's address."""

    def __init__(self, subject: str | None, identities: Mapping[str, Any]) -> None:
        self.subject = subject
        self._identities = identities

    def lookup(self, kind: str, value: Any = None) -> Any:
        del value  # Shu's signature; plugyard answers from the caller's own identities
        return self._identities.get(kind)

    def get_current_user_identity(self) -> dict[str, Any]:
        """Shu's ``{user_id, email}``: the subject, and its vouched e-mail (``email``,
        else the first ``<provider>_email``)."""
        email = self._identities.get("email")
        if email is None:
            email = next(
                (v for k, v in sorted(self._identities.items()) if k.endswith("_email")), None
            )
        return {"user_id": self.subject, "email": email}

    def get_primary_email(self, provider: str) -> Any:
        """Shu's name for ``lookup(f"{provider}_email")``."""
        return self._identities.get(f"{provider}_email")


class PluginAudit:
    """``audit.record(event, **detail)``: an event the plugin adds to the durable log."""

    def __init__(
        self,
        append: Callable[..., Any],
        plugin_id: str,
        subject: str | None,
        request_id: str,
        redactor: Redactor,
    ) -> None:
        self._append, self._plugin, self._subject = append, plugin_id, subject
        self._request, self._redactor = request_id, redactor

    def record(self, event: str, **detail: Any) -> None:
        self._append(
            "plugin",
            status=str(event)[:32],
            plugin_id=self._plugin,
            subject=self._subject,
            request_id=self._request,
            detail=self._redactor.scrub_data(detail) or None,
        )


class Scheduler:
    """``scheduler.enqueue(operation, params, run_at)``: run later, as this caller.

    The seed's spelling ``enqueue(task, run_at)`` is read too: a second argument that is a
    time is ``run_at``. A task is an operation name, or a mapping — ``{"operation",
    "params"}``, or Shu's parameters with their ``op`` (run through ``execute``). A time is
    epoch seconds, a ``datetime`` (naive is UTC) or an ISO 8601 text."""

    def __init__(
        self, feeds: FeedRepository, plugin_id: str, subject: str | None, roles: tuple[str, ...]
    ) -> None:
        self._feeds, self._plugin, self._subject, self._roles = feeds, plugin_id, subject, roles

    def enqueue(
        self,
        operation: str | Mapping[str, Any],
        params: Mapping[str, Any] | float | str | datetime | None = None,
        run_at: float | str | datetime | None = None,
    ) -> str:
        if not isinstance(params, Mapping) and params is not None:
            if run_at is not None:
                raise CapabilityError("give params as a mapping", code="invalid_request")
            params, run_at = None, params
        operation, params = _task(operation, params)
        when = _moment(run_at)
        now = time.time()
        row = FeedRow(
            id="job-" + secrets.token_hex(8),
            owner=self._subject or "anonymous",
            roles=self._roles,
            plugin_id=self._plugin,
            operation=operation,
            params=dict(params or {}),
            interval_s=None,
            cron=None,
            enabled=True,
            next_run_at=when if when is not None else now,
            created_at=now,
        )
        self._feeds.create(row)
        return row.id


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _task(
    task: str | Mapping[str, Any], params: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    if isinstance(task, str) and task:
        return task, dict(params or {})
    if isinstance(task, Mapping) and params is None:
        if isinstance(task.get("operation"), str):
            inner = task.get("params") or {}
            if isinstance(inner, Mapping):
                return task["operation"], dict(inner)
        elif isinstance(task.get("op"), str):
            return "execute", dict(task)  # Shu: one entry, the op among the parameters
    raise CapabilityError(
        "a task is an operation name, {'operation', 'params'} or parameters with an 'op'",
        code="invalid_request",
    )


def _moment(value: float | str | datetime | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.timestamp()
    if isinstance(value, str):
        try:
            return _moment(datetime.fromisoformat(value))
        except ValueError:
            pass
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise CapabilityError(f"run_at {value!r} is not a time", code="invalid_request")


class Http:
    """``http.fetch(url, method=…, json=…, headers=…)`` → ``{status, headers, body}``.

    Shu's order is accepted too: ``fetch("GET", url, params=…, json=…, headers=…,
    timeout=…)`` (an HTTP method first, then a URL); ``params`` becomes the query string.
    The answer carries Shu's ``status_code`` beside ``status``."""

    def __init__(
        self, client: Any, plugin_id: str, allow_hosts: Callable[[], tuple[str, ...]]
    ) -> None:
        # The allowlist is asked at each fetch: a policy change applies to the next one.
        self._client, self._plugin, self._allow = client, plugin_id, allow_hosts

    async def fetch(
        self,
        url: str,
        method: str = "GET",
        *,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 30.0,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        if url.upper() in _METHODS and method.upper() not in _METHODS:
            url, method = method, url  # Shu's fetch(method, url)
        if params:
            url += ("&" if urlsplit(url).query else "?") + urlencode(
                [(k, str(v)) for k, v in params.items() if v is not None]
            )
        if timeout is not None:
            timeout_s = timeout
        host = (urlsplit(url).hostname or "").lower()
        if urlsplit(url).scheme not in {"http", "https"} or not any(
            wildcard_match(host, pattern.lower()) for pattern in self._allow()
        ):
            raise CapabilityError(
                f"{host or url!r} is not on the egress allowlist of {self._plugin!r}",
                code="egress_denied",
            )
        body = msgspec.json.encode(json) if json is not None else None
        reply = await self._client.request(
            method.upper(), url, json_body=body, headers=headers, timeout_s=timeout_s
        )
        return {
            "status": reply.status,
            "status_code": reply.status,
            "headers": dict(reply.headers),
            "body": reply.body.decode("utf-8", "replace"),
        }


class RedactingFilter(logging.Filter):
    """Scrubs secret values from a log record's message and exception text."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if self._redactor.armed:
            record.msg = self._redactor.scrub(record.getMessage())
            record.args = None
            if record.exc_info and record.exc_info[1] is not None:
                import traceback

                text = "".join(traceback.format_exception(*record.exc_info))
                record.exc_text = self._redactor.scrub(text)
                record.exc_info = None
        return True


class RedactingStream:
    """A text stream that scrubs secret values before they reach the real one (installed
    over ``sys.stderr`` once the first secret is read, so in-process plugins' stderr is
    covered too)."""

    def __init__(self, inner: Any, redactor: Redactor) -> None:
        self._inner, self._redactor = inner, redactor

    def write(self, text: str) -> int:
        self._inner.write(self._redactor.scrub(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def redact_stderr(redactor: Redactor) -> Callable[[], None]:
    """An ``on_arm`` hook: wrap ``sys.stderr`` (once)."""

    def install() -> None:
        import sys

        if not isinstance(sys.stderr, RedactingStream):
            sys.stderr = RedactingStream(sys.stderr, redactor)

    return install


#: HTTP methods that change nothing on the server (RFC 9110 §9.2.1).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


#: Where the host step keeps a call's :class:`Effects` ledger (its slot on the call).
EFFECTS = "host"


class Effects:
    """What one call wrote through the host: whether a retry under its idempotency key
    could do something twice. A write counts once it has gone ahead (a store write that
    returned, an ingestion past its point of no return, a non-safe HTTP request once
    sent). :meth:`close` ends the call: ingestions still running are stopped, and a write
    asked for after that is refused, so what the ledger says then stays true."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._landed: list[str] = []
        self._works: list[tuple[str, Any]] = []
        self.closed = False

    def begin(self, what: str) -> None:
        if self.closed:
            raise CapabilityError(
                f"host.{what}: the call it belongs to has ended", code="cancelled"
            )

    def record(self, what: str) -> None:
        with self._lock:
            self._landed.append(what)

    def track(self, what: str) -> Callable[[Any], None]:
        """A hook for work stopped through a cancel token (``plugyard.kb.cancel.Cancel``)."""

        def watch(cancel: Any) -> None:
            with self._lock:
                self.begin(what)
                self._works.append((what, cancel))

        return watch

    def close(self) -> tuple[str, ...]:
        """End the call and say what landed. A token's ``cancel()`` is false once its
        write has begun: that write lands, whether it has finished yet or not."""
        with self._lock:
            self.closed = True
            works, self._works = self._works, []
        for what, cancel in works:
            if not cancel.cancel():
                self.record(what)
        with self._lock:
            return tuple(self._landed)


class Recorded:
    """A host service whose ``writes`` methods are entered in a call's :class:`Effects`."""

    __slots__ = ("_effects", "_inner", "_name", "_writes")

    def __init__(self, inner: Any, name: str, writes: frozenset[str], effects: Effects) -> None:
        self._inner, self._name, self._writes, self._effects = inner, name, writes, effects

    def __getattr__(self, method: str) -> Any:
        value = getattr(self._inner, method)
        if method not in self._writes:
            return value
        label = f"{self._name}.{method}"
        effects = self._effects

        def write(*args: Any, **kwargs: Any) -> Any:
            effects.begin(label)
            done = value(*args, **kwargs)
            effects.record(label)  # it returned: the store committed it
            return done

        return write


class RecordedHttp:
    """``http.fetch`` entered in a call's :class:`Effects` when its method is not safe —
    before it is sent, since a request cut off mid-way may still have been served."""

    def __init__(self, inner: Http, effects: Effects) -> None:
        self._inner, self._effects = inner, effects

    async def fetch(self, url: str, method: str = "GET", **options: Any) -> dict[str, Any]:
        if method.upper() not in SAFE_METHODS:
            self._effects.begin("http.fetch")
            self._effects.record(f"http.{method.upper()}")
        return await self._inner.fetch(url, method, **options)
