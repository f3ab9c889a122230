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
        identities={"google_email": "bob@example.org"},
    )
    assert result.data == [[True, True, False], "bob@example.org", True]


def test_identity_answers_what_the_surface_vouched_for_never_the_body(table: Table) -> None:
    result = call_with(
        table,
        ("identity",),
        lambda host: host.identity.lookup("google_email"),
        user_context={"identities": {"google_email": "ceo@example.org"}},
    )
    assert result.ok and result.data is None


def bound_op(**properties: str) -> Operation:
    return Operation(
        id="go",
        parameters={
            "type": "object",
            "properties": {k: {"type": "string", "x-binding": v} for k, v in properties.items()},
        },
    )


def test_x_binding_fills_declared_identity_and_env(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REGION", "eu-west")
    seen: list[dict[str, Any]] = []

    def go(host: Any, **params: Any) -> Any:
        seen.append(params)
        return "ok"

    op = bound_op(email="identity:google_email", region="env:REGION")
    result = call_with(
        table,
        ("identity",),
        go,
        op,
        identities={"google_email": "bob@example.org"},
        user_context={"identities": {"google_email": "ceo@example.org"}},
    )
    assert result.ok
    assert seen == [{"email": "bob@example.org", "region": "eu-west"}]


@pytest.mark.parametrize(
    ("binding", "caps", "trust"),
    [
        ("secret:api_token", (), "trusted"),  # no secrets capability, no declaration
        ("secret:api_token", ("secrets",), "trusted"),  # capability, name not declared
        ("identity:google_email", (), "trusted"),  # no identity capability
        ("env:REGION", (), "untrusted"),  # environment is for trusted code only
        ("env:PLUGYARD_SECRETS_KEY", (), "trusted"),  # plugyard's own keys, never
        ("file:/etc/passwd", (), "trusted"),  # a kind the host does not know
    ],
)
def test_an_undeclared_binding_is_refused_before_the_plugin_runs(
    table: Table, monkeypatch: pytest.MonkeyPatch, binding: str, caps: tuple[str, ...], trust: str
) -> None:
    monkeypatch.setenv("REGION", "eu-west")
    monkeypatch.setenv("PLUGYARD_SECRETS_KEY", "00" * 32)
    runtime = HostRuntime()
    table.add(descriptor("p", bound_op(value=binding), host_capabilities=caps), trust=trust)
    ran: list[Any] = []
    runtime.functions[("p", "go")] = lambda host, **params: ran.append(params)
    g = governed(table, runtime)
    g.governance.vault.set("api_token", "system-secret-value-1234")
    result = g.call("p", "go", {})
    assert result.error is not None and result.error.code == "binding_undeclared"
    assert ran == []


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


@pytest.mark.parametrize(
    "claims",
    [
        {"permissions": ["plugin:p"]},
        {"permissions": ["plugin:*"], "roles": ["admin"], "subject": "admin"},
        {"identities": {"google_email": "ceo@example.org"}, "admin": True},
    ],
)
def test_user_context_is_data_and_grants_nothing(table: Table, claims: dict[str, Any]) -> None:
    """The escalation that once worked: a body's user_context claiming permissions."""
    runtime = HostRuntime()
    table.add(descriptor("p", Operation(id="go", effect="write")))
    ran: list[Any] = []
    runtime.functions[("p", "go")] = lambda host: ran.append(1)
    g = governed(table, runtime)
    result = g.call("p", "go", {}, roles=("reader",), user_context=claims)
    assert result.error is not None and result.error.code == "permission_denied"
    assert ran == []
    vouched = g.call("p", "go", {}, roles=("reader",), permissions=("plugin:p",))
    assert vouched.ok and ran == [1]  # the same permission, vouched by the surface, holds


def test_unknown_names_get_a_suggestion_only_among_what_the_caller_may_call(
    table: Table,
) -> None:
    runtime = HostRuntime()
    table.add(descriptor("calculator", Operation(id="evaluate"), Operation(id="explain")))
    table.add(descriptor("secret-admin-tool", Operation(id="go", effect="destructive")))
    g = governed(table, runtime)
    several = g.call("calculator", None, {})
    assert several.error is not None and several.error.code == "operation_not_found"
    assert "evaluate, explain" in several.error.message
    typo = g.call("calculator", "evalute", {})
    assert typo.error is not None and "'evaluate'" in typo.error.message
    known = g.call("calculater", "evaluate", {}, roles=("reader",))
    assert known.error is not None and known.error.code == "plugin_not_found"
    assert "'calculator'" in known.error.message
    hidden = g.call("secret-admin-tol", "go", {}, roles=("reader",))
    assert hidden.error is not None and "secret-admin-tool" not in hidden.error.message


def test_scheduler_enqueue_as_the_seed_writes_it(table: Table, tmp_path: Any) -> None:
    from datetime import UTC, datetime

    from plugyard.store.store import Store

    def go(host: Any) -> Any:
        return [
            host.scheduler.enqueue("go", 1_900_000_000),  # enqueue(task, run_at)
            host.scheduler.enqueue({"op": "sync", "kb_id": "k"}, "2030-01-01T00:00:00+00:00"),
            host.scheduler.enqueue("go", datetime(2031, 1, 1)),
        ]

    runtime = HostRuntime()
    table.add(descriptor("p", Operation(id="go"), host_capabilities=("scheduler",)))
    runtime.functions[("p", "go")] = go
    with Store.open(str(tmp_path / "s.db")) as store:
        setup = governed(table, runtime, store=store)
        result = setup.call("p", "go", {})
        assert result.status == "success", result.error
        rows = {row.id: row for row in setup.governance.feeds.all()}
        first, second, third = (rows[job] for job in result.data)
    assert (first.operation, first.params, first.next_run_at) == ("go", {}, 1_900_000_000.0)
    assert (second.operation, second.params) == ("execute", {"op": "sync", "kb_id": "k"})
    assert second.next_run_at == datetime(2030, 1, 1, tzinfo=UTC).timestamp()
    assert third.next_run_at == datetime(2031, 1, 1, tzinfo=UTC).timestamp()
    assert first.owner == "bob"  # run later as the caller
