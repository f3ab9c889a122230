"""Secrets: encrypted and bound to their owner, required when declared, and a canary
never seen outside the plugin that reads it."""

from __future__ import annotations

import base64
import logging
import sys
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from plugyard.errors import GovernanceError
from plugyard.governance.core import Governance
from plugyard.governance.secrets.vault import SecretVault
from plugyard.manifest.model import OpAuth, Operation, SecretRequirement
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Target
from plugyard.store.secrets import SqlSecretRepository
from plugyard.store.store import Store

from .conftest import Table, descriptor
from .governed import governed

CANARY = "canary/S3cr3t+Value=42!"


def variants(value: str) -> list[str]:
    raw = value.encode()
    return [
        value,
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        raw.hex(),
        raw.hex().upper(),
        quote(value, safe=""),
        quote_plus(value),
    ]


def count(text: str | bytes) -> int:
    data = text if isinstance(text, bytes) else text.encode()
    return sum(data.count(v.encode()) for v in variants(CANARY))


class HostRuntime:
    """Calls (and awaits, if need be) ``functions[(plugin, op)](host=…, **params)``."""

    kind = "python"

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], Any] = {}

    def check(self, target: Target) -> str | None:
        return None

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        try:
            value = self.functions[(target.descriptor.id, operation.id)](host=host, **params)
            if hasattr(value, "__await__"):
                value = await value
            return Outcome(data=value)
        except Exception as exc:
            return Outcome(status="error", error=ErrorInfo("plugin_error", str(exc)))


def vault() -> SecretVault:
    return Governance.in_memory().vault


def test_user_secrets_fall_back_to_the_system_one() -> None:
    v = vault()
    v.set("token", "system-value", scope="system")
    v.set("token", "bob-value", scope="user", owner="bob")
    assert v.resolve("token", "bob") == "bob-value"
    assert v.resolve("token", "carol") == "system-value"
    assert v.resolve("token", "carol", "user") is None
    assert v.resolve("token", "bob", "system") == "system-value"


def test_a_row_moved_to_another_owner_fails_to_decrypt() -> None:
    store = Store.open(":memory:")
    v = SecretVault(SqlSecretRepository(store), b"k" * 32)
    v.set("token", "bob-value", scope="user", owner="bob")
    with store.writing() as connection:
        connection.exec_driver_sql("UPDATE secrets SET owner = 'mallory' WHERE owner = 'bob'")
    with pytest.raises(GovernanceError) as caught:
        v.resolve("token", "mallory")
    assert caught.value.code == "secrets_key_error"


def test_another_master_key_cannot_read_the_secrets() -> None:
    repo = SqlSecretRepository(Store.open(":memory:"))
    SecretVault(repo, b"a" * 32).set("token", "value-123")
    with pytest.raises(GovernanceError) as caught:
        SecretVault(repo, b"b" * 32).resolve("token", None)
    assert caught.value.code == "secrets_key_error"


def test_listing_never_shows_a_value() -> None:
    v = vault()
    v.set("token", CANARY, scope="user", owner="bob")
    assert count(repr(v.list())) == 0
    assert [s.name for s in v.list(owner="bob")] == ["token"]


def leaky_plugin(table: Table, runtime: HostRuntime) -> None:
    op = Operation(
        id="leak",
        parameters={
            "type": "object",
            "properties": {"token": {"type": "string", "x-binding": "secret:api_token"}},
        },
    )
    fail = Operation(id="fail")
    table.add(
        descriptor(
            "leaky",
            op,
            fail,
            host_capabilities=("secrets", "logger"),
            secrets=("api_token",),
            op_auth={"leak": OpAuth(secrets={"api_token": SecretRequirement()})},
        )
    )

    def leak(host: Any, token: str) -> dict[str, Any]:
        value = host.secrets.get("api_token")
        assert value == token == CANARY
        host.logger.warning("calling with %s and %s", value, base64.b64encode(value.encode()))
        print(f"plugin stderr: {value} {quote(value, safe='')}", file=sys.stderr)
        return {v: v for v in variants(value)}

    def fail_(host: Any) -> None:
        raise RuntimeError(f"upstream refused {host.secrets.get('api_token')}")

    runtime.functions[("leaky", "leak")] = leak
    runtime.functions[("leaky", "fail")] = fail_


def test_a_required_secret_that_is_missing_runs_nothing(table: Table) -> None:
    runtime = HostRuntime()
    leaky_plugin(table, runtime)
    g = governed(table, runtime)  # type: ignore[arg-type]
    result = g.call("leaky", "leak", {})
    assert result.error is not None and result.error.code == "missing_secrets"
    assert result.error.details["missing"] == ["api_token"]
    assert g.governance.audit.tail(1)[0].error_code == "missing_secrets"


def test_a_canary_secret_never_leaves_the_plugin(
    table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = HostRuntime()
    leaky_plugin(table, runtime)
    store = Store.open(str(tmp_path / "canary.db"))
    g = governed(table, runtime, store=store)  # type: ignore[arg-type]
    logs = StringIO()
    handler = logging.StreamHandler(logs)
    logging.getLogger("plugyard").addHandler(handler)
    try:
        g.governance.vault.set("api_token", CANARY, scope="system")
        responses = [
            g.call("leaky", "leak", {}, key="once", debug=True),
            g.call("leaky", "leak", {}, key="once", debug=True),
            g.call("leaky", "fail", {}, debug=True),
        ]
    finally:
        logging.getLogger("plugyard").removeHandler(handler)
    assert responses[0].ok and responses[1].ok
    assert responses[2].error is not None and responses[2].error.code == "plugin_error"
    assert "[REDACTED]" in responses[2].error.message
    import json

    assert count(json.dumps([r.to_dict() for r in responses])) == 0
    assert "[REDACTED]" in logs.getvalue() and count(logs.getvalue()) == 0
    captured = capsys.readouterr()
    assert "plugin stderr" in captured.err and count(captured.err + captured.out) == 0
    assert count(repr(g.governance.audit.tail(100))) == 0
    assert g.governance.audit.verify().ok
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("canary.db"))
    assert stored and count(stored) == 0


TRANSFORMS = {
    "reversed": lambda s: s[::-1],
    "base64 of reversed": lambda s: base64.b64encode(s[::-1].encode()).decode(),
    "split in two": lambda s: f"{s[: len(s) // 2]} ... {s[len(s) // 2 :]}",
    "split in three": lambda s: " | ".join(s[i : i + len(s) // 3 + 1] for i in (0, 11, 22)),
    "hex": lambda s: s.encode().hex(),
    "url-safe base64 without padding": lambda s: (
        base64.urlsafe_b64encode(s.encode()).decode().rstrip("=")
    ),
}
LONG_SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_transformed_secret_is_scrubbed_from_what_leaves(name: str) -> None:
    v = vault()
    v.set("api_key", LONG_SECRET)
    assert v.resolve("api_key", None) == LONG_SECRET  # handing it out arms the redactor
    leaked = TRANSFORMS[name](LONG_SECRET)
    scrubbed = v.redactor.scrub_data({"out": leaked, "nested": [leaked]})
    text = repr(scrubbed)
    assert "[REDACTED]" in text
    # No run of 12 characters of the secret (or of its reversal) survives.
    for source in (LONG_SECRET, LONG_SECRET[::-1]):
        for start in range(len(source) - 12):
            piece = source[start : start + 12]
            assert piece not in scrubbed["out"], (name, piece)


def test_ordinary_text_is_not_scrubbed_by_the_pieces_of_a_secret() -> None:
    v = vault()
    v.set("api_key", LONG_SECRET)
    v.resolve("api_key", None)
    text = "the quick brown fox jumps over 12 lazy dogs; sk-test is a prefix"
    assert v.redactor.scrub(text) == text
