"""The governed steps of the call path (DESIGN.md §4), between the policy decision and
the parameters check, and at the end of every call.

``admit`` — after a decision that is not ``deny``:

1. ``allow_with_approval`` without a receipt → ``pending_approval`` with a receipt;
2. an idempotency key → claimed atomically; a finished key replays its stored result
   (so a retry of an approved call gets its result, not ``receipt_used``), the same key
   with other parameters is ``idempotency_conflict``, an unfinished one
   ``idempotency_unknown``;
3. a receipt → checked (bound to this exact request, single-use, unexpired, approved)
   but not yet spent, or the call is refused with the receipt's error code;
4. every secret the operation's ``op_auth`` requires is present → else
   ``missing_secrets``;
5. ``x-binding`` parameters are declared and trusted (``binding_undeclared``) and filled
   in for the plugin (never for the audit hash).

``commit`` — the last step before the plugin runs, after the parameters check: the
receipt is spent. Nothing a call consumes is consumed before the call is known to go on.

``conclude`` — for every call, refused or not: secret values are scrubbed from the
result, and the idempotency key is completed (``done`` with the result, ``unknown``
after a timeout or cancellation, released when the plugin never ran). A call that ended
without an answer releases its key too when plugyard knows nothing landed: its work was
stopped (a subprocess request is given up, its later host calls refused), it could act
only through the host (untrusted, so sandboxed; or a read-only operation), and its
:class:`~plugyard.governance.host.services.Effects` ledger recorded no write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from plugyard.errors import GovernanceError
from plugyard.execution.host import CapabilityError, Host
from plugyard.execution.overlay import HostContext
from plugyard.execution.result import Result
from plugyard.governance.approvals import ApprovalDesk
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.audit.event import AuditEvent, AuditSink
from plugyard.governance.bindings import allowed_bindings, bind
from plugyard.governance.digest import request_digest
from plugyard.governance.host.services import (
    Cursor,
    Effects,
    Http,
    Identity,
    PluginAudit,
    RateLimit,
    Recorded,
    RecordedHttp,
    RedactingFilter,
    Scheduler,
    SecretsView,
    Storage,
)
from plugyard.governance.host.services import (
    redact_stderr as stderr_hook,
)
from plugyard.governance.host.shared_limits import SharedRateLimit
from plugyard.governance.idempotency import Claim, IdempotencyLedger, Refusal, Replay
from plugyard.governance.identities.accounts import AccountVault
from plugyard.governance.identities.op_auth import Identities, op_auth_for
from plugyard.governance.identities.providers import AuthError, ProviderRegistry
from plugyard.governance.policy.base import Decision
from plugyard.governance.secrets.keys import AUDIT_KEY, SECRETS_KEY, load_key
from plugyard.governance.secrets.vault import SecretVault
from plugyard.manifest.model import OpAuth, Operation, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome
from plugyard.store.accounts import SqlAccountRepository
from plugyard.store.approvals import SqlApprovalRepository
from plugyard.store.audit import SqlAuditRepository
from plugyard.store.feeds import FeedRepository, SqlFeedRepository
from plugyard.store.home import data_home
from plugyard.store.idempotency import SqlIdempotencyRepository
from plugyard.store.kv import KeyValueRepository, SqlKeyValueRepository
from plugyard.store.rate_buckets import SqlRateBuckets
from plugyard.store.secrets import SqlSecretRepository
from plugyard.store.store import Store

_PER_CALL = frozenset({"secrets", "identity", "audit", "scheduler", "auth"})
#: Ends after which nobody knows whether the plugin's side effect happened: the key is
#: left "unknown", so a retry is refused rather than run twice.
_UNKNOWN = frozenset({"cancelled", "worker_lost"})
#: The host services that write, and their writing methods (``kb`` and ``http`` apart).
_WRITES: dict[str, frozenset[str]] = {
    "storage": frozenset({"put", "set", "delete"}),
    "cursor": frozenset({"set"}),
    "scheduler": frozenset({"enqueue"}),
    "audit": frozenset({"record"}),
}
#: Runtimes whose work ends with its call: a subprocess request given up is cancelled
#: or its worker killed, and host calls naming it are no longer served.
_STOPPED_AT_DEADLINE = frozenset({"subprocess"})


@dataclass(slots=True)
class Governed:
    """What the governed steps of one call remember."""

    approver: str | None = None
    claim: Claim | None = None
    params: dict[str, Any] | None = None  # with x-binding values: for the plugin only
    dispatched: bool = False
    secrets_view: SecretsView | None = None
    receipt: str | None = None  # checked in ``admit``, spent in ``commit``
    digest: str | None = None
    auth: OpAuth | None = None  # the op's ``op_auth`` (for ``host.auth``)
    #: what the call wrote through the host (set when its host object is made)
    effects: Effects | None = None
    #: stopped at its deadline and able to act only through the host
    confined: bool = False


@dataclass
class Governance:
    """Approvals, idempotency, secrets, the durable audit and the host services."""

    approvals: ApprovalDesk
    idempotency: IdempotencyLedger
    audit: ChainedAudit
    vault: SecretVault
    kv: KeyValueRepository
    feeds: FeedRepository
    approval_ttl_s: Callable[[], float] = lambda: 3600.0
    egress: Callable[[RegisteredPlugin], tuple[str, ...]] = lambda plugin: ()
    http_client: Any = None
    #: the knowledge base behind host.kb / host.query / host.ocr (plugyard.kb)
    kb: Any = None
    #: connected accounts and identity providers behind host.auth (None: built here)
    identities: Identities | None = None
    redact_stderr: bool = True
    #: plugin id → its ``host.rate_limit``; ``None``: a bucket in this process's memory.
    rate_limits: Callable[[str], Any] | None = None
    _limits: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.redact_stderr and self.vault.redactor.on_arm is None:
            self.vault.redactor.on_arm = stderr_hook(self.vault.redactor)
        if self.identities is None:
            repository = SqlAccountRepository(Store.open(":memory:"))
            accounts = AccountVault(repository, _random_key(), self.vault.redactor)
            self.identities = Identities(accounts, ProviderRegistry(), self.vault.redactor)

    @classmethod
    def over(
        cls, store: Store, *, environ: Mapping[str, str] | None = None, **options: Any
    ) -> Governance:
        """Governance kept in ``store``, with its keys from the environment or key files
        beside the database (see :mod:`plugyard.governance.secrets.keys`)."""
        folder = key_folder(store)
        secrets_key = load_key(SECRETS_KEY, folder, environ)
        vault = SecretVault(SqlSecretRepository(store), secrets_key)
        accounts = AccountVault(SqlAccountRepository(store), secrets_key, vault.redactor)
        options.setdefault("identities", Identities(accounts, ProviderRegistry(), vault.redactor))
        buckets = SqlRateBuckets(store)
        # Shared by the fleet: a limit of N admits N across every replica.
        options.setdefault("rate_limits", lambda plugin_id: SharedRateLimit(buckets, plugin_id))
        return cls(
            approvals=ApprovalDesk(SqlApprovalRepository(store)),
            idempotency=IdempotencyLedger(SqlIdempotencyRepository(store)),
            audit=ChainedAudit(SqlAuditRepository(store), load_key(AUDIT_KEY, folder, environ)),
            vault=vault,
            kv=SqlKeyValueRepository(store),
            feeds=SqlFeedRepository(store),
            **options,
        )

    @classmethod
    def in_memory(cls, **options: Any) -> Governance:
        """Nothing persisted: the same SQL repositories on an in-memory store, random keys."""
        store = Store.open(":memory:")
        return cls(
            approvals=ApprovalDesk(SqlApprovalRepository(store)),
            idempotency=IdempotencyLedger(SqlIdempotencyRepository(store)),
            audit=ChainedAudit(SqlAuditRepository(store), load_key(AUDIT_KEY, None, {})),
            vault=SecretVault(SqlSecretRepository(store), load_key(SECRETS_KEY, None, {})),
            kv=SqlKeyValueRepository(store),
            feeds=SqlFeedRepository(store),
            **options,
        )

    # ------------------------------------------------------------------ before the run

    def admit(
        self,
        plugin: RegisteredPlugin,
        operation: Operation,
        params: Mapping[str, Any],
        context: CallContext,
        decision: Decision,
        receipt: str | None,
        state: Governed,
    ) -> Outcome | None:
        subject = context.subject
        digest: str | None = None
        state.confined = plugin.descriptor.runtime.kind in _STOPPED_AT_DEADLINE and (
            plugin.trust == "untrusted" or _declared_read_only(operation)
        )
        if decision.outcome == "allow_with_approval":
            digest = request_digest(plugin.id, operation.id, params, subject)
            if receipt is None:
                preview = {
                    "plugin": plugin.id,
                    "operation": operation.id,
                    "subject": subject,
                    "params": self.vault.redactor.scrub_data(dict(params)),
                    "reason": decision.reason,
                }
                pending = self.approvals.request(
                    digest=digest,
                    subject=subject,
                    plugin_id=plugin.id,
                    operation=operation.id,
                    preview=preview,
                    policy_version=decision.policy_version,
                    ttl_s=self.approval_ttl_s(),
                )
                return Outcome(status="pending_approval", data=pending.to_dict())
        # The key is claimed before the receipt is spent: a retry of an approved call
        # (same key, same receipt) then gets the stored result, not ``receipt_used``.
        if context.idempotency_key is not None:
            digest = digest or request_digest(plugin.id, operation.id, params, subject)
            found = self.idempotency.claim(
                subject=subject,
                key=context.idempotency_key,
                digest=digest,
                plugin_id=plugin.id,
                operation=operation.id,
                request_id=context.request_id,
                read_only=operation.effect == "read" and operation.kind == "call",
            )
            if isinstance(found, Refusal):
                return _refuse(found.code, found.message)
            if isinstance(found, Replay):
                return _replay(found.result)
            state.claim = found
        if receipt is not None and decision.outcome == "allow_with_approval":
            assert digest is not None
            try:
                self.approvals.check(receipt, digest)
            except GovernanceError as exc:
                self._release(state)
                return _refuse(exc.code, exc.message)
            state.receipt, state.digest = receipt, digest
        auth = op_auth_for(plugin.descriptor, operation, params)
        state.auth = auth
        if auth is not None and auth.secrets:
            missing = sorted(
                name
                for name, need in auth.secrets.items()
                if not self.vault.present(name, subject, need.allowed_scope)
            )
            if missing:
                return _refuse(
                    "missing_secrets", f"not configured: {', '.join(missing)}", missing=missing
                )
        identities = self.identities
        if identities is not None and (auth is not None or plugin.descriptor.required_identities):
            try:
                identities.check(plugin.descriptor, auth, subject)
            except AuthError as exc:
                return _refuse(exc.code, exc.message, **exc.details)
        try:
            wanted = allowed_bindings(
                plugin.content_hash, plugin.descriptor, operation, plugin.trust
            )
        except GovernanceError as exc:
            return _refuse(exc.code, exc.message)
        if wanted:
            bound = bind(
                params,
                wanted,
                subject=subject,
                identities=context.identities,
                vault=self.vault,
                scopes={n: s.allowed_scope for n, s in auth.secrets.items()} if auth else None,
            )
            if bound.missing_secrets:
                return _refuse(
                    "missing_secrets",
                    f"not configured: {', '.join(bound.missing_secrets)}",
                    missing=list(bound.missing_secrets),
                )
            state.params = bound.params
        return None

    def commit(self, state: Governed) -> Outcome | None:
        """The last step before the plugin runs: spend the approval receipt. Everything
        that could refuse the call has passed by now, so a refusal never costs the
        caller its receipt; only a receipt spent in the meantime (a concurrent
        redemption) refuses here, and then the idempotency key is freed again."""
        if state.receipt is None or state.digest is None:
            return None
        try:
            row = self.approvals.redeem(state.receipt, state.digest)
        except GovernanceError as exc:
            self._release(state)
            return _refuse(exc.code, exc.message)
        state.approver = row.decided_by
        return None

    def _release(self, state: Governed) -> None:
        if state.claim is not None:  # nothing ran: the key is free for a retry
            self.idempotency.release(state.claim)
            state.claim = None

    # ------------------------------------------------------------------ after the run

    def conclude(
        self, state: Governed, result: Result, event: AuditEvent, sink: AuditSink
    ) -> Result:
        """Scrub the result, complete the idempotency key and audit the call — the
        completion and the audit event commit together when the sink is the chain."""
        redactor = self.vault.redactor
        if redactor.armed:
            result = _scrubbed(result, redactor.scrub_data, redactor.scrub)
        extra = None
        claim = state.claim
        landed = state.effects.close() if state.effects is not None else None
        if claim is not None:
            if not state.dispatched:
                self.idempotency.release(claim)
            elif result.status == "timeout" or (result.error and result.error.code in _UNKNOWN):
                if state.confined and landed == ():
                    # Stopped, and nothing it did landed: as if it never ran.
                    self.idempotency.release(claim)
                    event = event._replace(
                        detail={"idempotency": "released", "reason": "stopped; nothing landed"}
                    )
                else:
                    extra = self.idempotency.completion(claim, "unknown", None)
            else:
                extra = self.idempotency.completion(claim, "done", result.to_dict())
        if isinstance(sink, ChainedAudit):
            sink.emit(event, extra)
        else:
            sink.emit(event)
            if extra is not None:
                extra(None)
        return result

    # ------------------------------------------------------------------ the host object

    def plugin_services(self, plugin: RegisteredPlugin) -> dict[str, Any]:
        """Services that depend only on the plugin (cached with its host)."""
        declared = set(plugin.descriptor.host_capabilities)
        services: dict[str, Any] = {}
        if "storage" in declared:
            services["storage"] = Storage(self.kv, plugin.id)
        if "cursor" in declared or "kb" in declared:  # Shu: kb brings cursor with it
            services["cursor"] = Cursor(self.kv, plugin.id)
        if "rate_limit" in declared:
            limit = self._limits.get(plugin.id)
            if limit is None:
                make = self.rate_limits or RateLimit
                limit = self._limits.setdefault(plugin.id, make(plugin.id))
            services["rate_limit"] = limit
        if "http" in declared and self.http_client is not None:
            services["http"] = Http(self.http_client, plugin.id, lambda: self.egress(plugin))
        if self.kb is not None:
            from plugyard.kb.host import KbHost, OcrHost, QueryHost

            if "kb" in declared:
                services["kb"] = KbHost(self.kb, plugin.id)
            if {"kb", "query"} & declared:
                services["query"] = QueryHost(self.kb, plugin.id)
            if "ocr" in declared:
                services["ocr"] = OcrHost(self.kb)
        if {"logger", "log"} & declared:
            import logging

            logger = logging.getLogger(f"plugyard.plugin.{plugin.id}")
            if not any(isinstance(f, RedactingFilter) for f in logger.filters):
                logger.addFilter(RedactingFilter(self.vault.redactor))
        return services

    def needs_call_services(self, descriptor: PluginDescriptor) -> bool:
        return not _PER_CALL.isdisjoint(descriptor.host_capabilities)

    def call_services(
        self, plugin: RegisteredPlugin, context: CallContext, state: Governed
    ) -> dict[str, Any]:
        descriptor = plugin.descriptor
        declared = set(descriptor.host_capabilities)
        services: dict[str, Any] = {}
        if "secrets" in declared:
            names = dict.fromkeys(descriptor.secrets, "system_or_user")
            for auth in descriptor.op_auth.values():
                for name, need in auth.secrets.items():
                    names[name] = need.allowed_scope
            state.secrets_view = SecretsView(self.vault, context.subject, names)
            services["secrets"] = state.secrets_view
        if "identity" in declared:
            services["identity"] = Identity(context.subject, context.identities)
        if "audit" in declared:
            services["audit"] = PluginAudit(
                self.audit.append,
                plugin.id,
                context.subject,
                context.request_id,
                self.vault.redactor,
            )
        if "scheduler" in declared:
            services["scheduler"] = Scheduler(self.feeds, plugin.id, context.subject, context.roles)
        if "auth" in declared and self.identities is not None:
            services["auth"] = self.identities.host(
                descriptor, state.auth, context.subject, context.identities
            )
        return services

    def host_for(
        self,
        host: Host,
        plugin: RegisteredPlugin,
        context: CallContext,
        state: Governed,
        overlay: HostContext | None = None,
    ) -> Host:
        extra: dict[str, Any] = {}
        bound = overlay is not None and (overlay.ocr_mode or overlay.knowledge_base_ids)
        if overlay is not None and bound and "kb" in host.capabilities:
            with contextlib.suppress(CapabilityError):
                kb = host.kb
                if hasattr(kb, "with_mode"):
                    extra["kb"] = kb.with_mode(overlay.ocr_mode, overlay.knowledge_base_ids)
        if self.needs_call_services(plugin.descriptor):
            extra.update(self.call_services(plugin, context, state))
        effects = state.effects = Effects()
        for name in host.capabilities & {"kb", "http", *_WRITES}:
            service = extra.get(name)
            if service is None:
                with contextlib.suppress(CapabilityError):
                    service = getattr(host, name)
            if service is None:
                continue
            if name == "kb":
                if hasattr(service, "with_effects"):
                    extra[name] = service.with_effects(effects.track("kb.ingest"))
            elif name == "http":
                if isinstance(service, Http):
                    extra[name] = RecordedHttp(service, effects)
            else:
                extra[name] = Recorded(service, name, _WRITES[name], effects)
        return host.extended(extra) if extra else host


def _declared_read_only(operation: Operation) -> bool:
    """Read-only by the plugin's own word, not by the default of an undeclared effect."""
    return (
        operation.effect == "read"
        and operation.kind == "call"
        and "effect" in operation.model_fields_set
    )


def _random_key() -> bytes:
    return load_key(SECRETS_KEY, None, {})


def key_folder(store: Store) -> Path | None:
    """Where the embedded default keeps its key files: beside the SQLite file; the
    per-user data folder for a server database (not the working folder, which is
    arbitrary for a desktop MCP client); nowhere for an in-memory one."""
    if store.backend == "sqlite":
        database = store.engine.url.database
        return None if database in (None, "", ":memory:") else Path(database).parent
    return data_home()


def _refuse(code: str, message: str, **details: Any) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message, details))


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


def _scrubbed(result: Result, data: Callable[[Any], Any], text: Callable[[str], str]) -> Result:
    error = result.error
    if error is not None:
        error = ErrorInfo(error.code, text(error.message), data(dict(error.details)))
    return replace(
        result,
        data=data(result.data),
        error=error,
        diagnostics=tuple(text(d) for d in result.diagnostics),
        skips=tuple(data(dict(s)) for s in result.skips),
        citations=tuple(data(dict(c)) for c in result.citations),
        next_cursor=text(result.next_cursor) if result.next_cursor else result.next_cursor,
    )
