"""A governed executor over the test doubles: memory twins, or a SQLite store."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.governance.core import Governance
from plugyard.governance.policy.book import PolicyBook, facts_from
from plugyard.runtimes.base import CallContext
from plugyard.store.policies import SqlPolicyRepository
from plugyard.store.store import Store
from plugyard.yard.steps import call_path

from .conftest import FunctionRuntime, Table

KEYS = {"PLUGYARD_AUDIT_KEY": "ab" * 32, "PLUGYARD_SECRETS_KEY": "cd" * 32}


@dataclass
class Governed:
    executor: Executor
    governance: Governance
    book: PolicyBook
    #: Without a loaded policy the starter one is in force: calls hold the admin role
    #: unless a test names roles, so the mechanics under test are not refused first.
    default_roles: tuple[str, ...] = ()

    def call(
        self,
        plugin: str,
        op: str | None,
        params: dict[str, Any] | None = None,
        *,
        subject: str | None = "bob",
        receipt: str | None = None,
        key: str | None = None,
        roles: tuple[str, ...] | None = None,
        **context: Any,
    ) -> Result:
        return asyncio.run(
            self.acall(
                plugin,
                op,
                params,
                subject=subject,
                receipt=receipt,
                key=key,
                roles=roles,
                **context,
            )
        )

    async def acall(
        self,
        plugin: str,
        op: str | None,
        params: dict[str, Any] | None = None,
        *,
        subject: str | None = "bob",
        receipt: str | None = None,
        key: str | None = None,
        roles: tuple[str, ...] | None = None,
        **context: Any,
    ) -> Result:
        held = self.default_roles if roles is None else roles
        ctx = CallContext("req", subject=subject, roles=held, idempotency_key=key, **context)
        request = CallRequest(plugin, op, dict(params or {}), ctx, approval_receipt=receipt)
        return await self.executor.call(request)


def governed(
    table: Table, runtime: FunctionRuntime, policy: str | None = None, store: Store | None = None
) -> Governed:
    if store is None:
        governance = Governance.in_memory()
        book = PolicyBook(SqlPolicyRepository(Store.open(":memory:")), facts=facts_from(table.find))
    else:
        governance = Governance.over(store, environ=KEYS)
        book = PolicyBook(SqlPolicyRepository(store), facts=facts_from(table.find))
    if policy is not None:
        book.load_text(policy)
    steps = call_path(table, policy=book, governance=governance)
    executor = Executor(table, {"python": runtime}, steps=steps)
    return Governed(executor, governance, book, () if policy is not None else ("admin",))
