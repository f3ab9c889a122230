"""Governance (DESIGN.md §7): the stores, keys and services the governed steps of the
call path work with.

The steps themselves live beside their concepts — ``policy/step.py``,
``approvals.py`` (approval, receipt, redeem), ``idempotency.py`` (idempotency,
complete), ``secrets/step.py`` (secrets, scrub), ``identities/step.py``,
``bindings.py``, ``host/step.py`` and ``audit/step.py`` — and the composition root
(``plugyard.yard.steps``) puts them in order; see docs/governance.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugyard.governance.approvals import ApprovalDesk
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.host.services import (
    Cursor,
    Http,
    Identity,
    PluginAudit,
    RateLimit,
    RedactingFilter,
    Scheduler,
    SecretsView,
    Storage,
)
from plugyard.governance.host.services import (
    redact_stderr as stderr_hook,
)
from plugyard.governance.host.shared_limits import SharedRateLimit
from plugyard.governance.idempotency import IdempotencyLedger
from plugyard.governance.identities.accounts import AccountVault
from plugyard.governance.identities.op_auth import Identities
from plugyard.governance.identities.providers import ProviderRegistry
from plugyard.governance.secrets.keys import AUDIT_KEY, SECRETS_KEY, load_key
from plugyard.governance.secrets.vault import SecretVault
from plugyard.manifest.model import OpAuth, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
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
        self, plugin: RegisteredPlugin, context: CallContext, auth: OpAuth | None
    ) -> dict[str, Any]:
        """Services made for one call (they know its caller)."""
        descriptor = plugin.descriptor
        declared = set(descriptor.host_capabilities)
        services: dict[str, Any] = {}
        if "secrets" in declared:
            names = dict.fromkeys(descriptor.secrets, "system_or_user")
            for auth in descriptor.op_auth.values():
                for name, need in auth.secrets.items():
                    names[name] = need.allowed_scope
            services["secrets"] = SecretsView(self.vault, context.subject, names)
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
                descriptor, auth, context.subject, context.identities
            )
        return services


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
