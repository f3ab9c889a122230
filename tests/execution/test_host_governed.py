"""The host object under governance: only declared capabilities, and x-binding."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard.manifest.model import Operation

from .conftest import Table, descriptor
from .governed import governed
from .test_secrets import HostRuntime


def call_with(
    table: Table, caps: tuple[str, ...], fn: Any, op: Operation | None = None, **context: Any
) -> Any:
    runtime = HostRuntime()
    op = op or Operation(id="go")
    table.add(descriptor("p", op, host_capabilities=caps))
    runtime.functions[("p", op.id)] = fn
    return governed(table, runtime).call("p", op.id, {}, **context)  # type: ignore[arg-type]


@pytest.mark.parametrize("capability", ["secrets", "http", "storage", "scheduler", "audit", "kb"])
def test_an_undeclared_capability_is_not_granted(table: Table, capability: str) -> None:
    result = call_with(table, ("cache",), lambda host: getattr(host, capability))
    assert result.error is not None and "not declare" in result.error.message


def test_storage_and_cursor_keep_values_per_plugin(table: Table) -> None:
    def go(host: Any) -> Any:
        host.storage.put("k", {"v": 1})
        host.cursor.set("inbox", "c-9")
        return [host.storage.get("k"), host.cursor.get("inbox"), host.storage.keys()]

    result = call_with(table, ("storage", "cursor"), go)
    assert result.data == [{"v": 1}, "c-9", ["k"]]


def test_rate_limit_identity_audit_and_scheduler(table: Table) -> None:
    def go(host: Any) -> Any:
        allowed = [host.rate_limit.try_acquire("api", 30) for _ in range(3)]
        host.audit.record("exported", rows=3)
        job = host.scheduler.enqueue("go", {"later": True}, run_at=0)
        return [allowed, host.identity.lookup("google_email"), job.startswith("job-")]

    result = call_with(
        table,
        ("rate_limit", "identity", "audit", "scheduler"),
        go,
        user_context={"identities": {"google_email": "bob@example.org"}},
    )
    assert result.data == [[True, True, False], "bob@example.org", True]


def test_x_binding_fills_identity_and_env_but_never_plugyard_keys(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REGION", "eu-west")
    monkeypatch.setenv("PLUGYARD_SECRETS_KEY", "00" * 32)
    op = Operation(
        id="go",
        parameters={
            "type": "object",
            "properties": {
                "email": {"type": "string", "x-binding": "identity:google_email"},
                "region": {"type": "string", "x-binding": "env:REGION"},
                "key": {"type": "string", "x-binding": "env:PLUGYARD_SECRETS_KEY"},
            },
        },
    )
    seen: list[dict[str, Any]] = []

    def go(host: Any, **params: Any) -> Any:
        seen.append(params)
        return "ok"

    result = call_with(
        table, (), go, op, user_context={"identities": {"google_email": "bob@example.org"}}
    )
    assert result.ok
    assert seen == [{"email": "bob@example.org", "region": "eu-west"}]


class FakeClient:
    def __init__(self) -> None:
        self.urls: list[str] = []

    async def request(self, method: str, url: str, **kw: Any) -> Any:
        from plugyard.runtimes.outbound import Reply

        self.urls.append(url)
        return Reply(200, b'{"ok": true}', {"content-type": "application/json"}, url)


def test_http_reaches_only_hosts_on_the_egress_allowlist(table: Table) -> None:
    runtime = HostRuntime()
    table.add(descriptor("web", Operation(id="go"), host_capabilities=("http",)))
    client = FakeClient()
    g = governed(
        table,
        runtime,
        "subjects: {bob: {}}\ngrants: [{to: '*', effect: allow}]\n"
        "egress: {web: ['api.example.org', '*.github.com']}",
    )  # type: ignore[arg-type]
    g.governance.http_client = client
    g.governance.egress = lambda plugin: g.book.egress(plugin.id)

    async def go(host: Any) -> Any:
        reply = await host.http.fetch("https://api.github.com/repos")
        try:
            await host.http.fetch("http://169.254.169.254/latest/meta-data")
        except Exception as exc:
            return [reply["status"], getattr(exc, "code", None)]
        return "escaped"

    runtime.functions[("web", "go")] = lambda host: go(host)
    result = asyncio.run(g.acall("web", "go"))
    assert result.data == [200, "egress_denied"]
    assert client.urls == ["https://api.github.com/repos"]
