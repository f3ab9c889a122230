"""The rest of the Shu contract through the executor, with Shu plugins as the seed writes
them: host.kb and host.query (with the __host OCR overlay), host.auth with op_auth and
required_identities enforced (a loopback token endpoint issues the tokens), actions from
list_actions / perform_action with approvals and audit."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.result import Result
from plugyard.governance.admin import context_for
from plugyard.governance.identities.loopback import LoopbackTokenServer
from plugyard.governance.identities.oauth2 import OAuth2Provider
from plugyard.governance.identities.op_auth import connect
from plugyard.types import Caller
from plugyard.yard import Settings, Yard

PLUGINS = Path(__file__).resolve().parents[1] / "shu_plugins"
POLICY = """
subjects: {bob: {roles: [clerk]}, carol: {roles: [clerk]}, alice: {roles: [boss]}}
grants:
  - {to: "role:clerk", plugin: "*", effect: allow}
  - {to: "role:clerk", plugin: mail_actions, operation: send_reply, effect: allow_with_approval}
  - {to: "role:boss", plugin: "*", verb: approve, effect: allow}
"""
MESSAGES = [
    {"id": "m1", "subject": "Budget", "from": "ann@x", "body": "The budget is approved."},
    {"id": "m2", "subject": "Offsite", "from": "ben@x", "body": "Offsite moves to May."},
]


@pytest.fixture
def server() -> Iterator[LoopbackTokenServer]:
    accounts = {"rt-bob": (("gmail.readonly",), "bob@example.com")}
    with LoopbackTokenServer(accounts) as running:
        yield running


@pytest.fixture
def yard(server: LoopbackTokenServer) -> Iterator[Yard]:
    folders = tuple(PLUGINS / name for name in ("gmail_digest", "drive_ingest", "mail_actions"))
    settings = Settings(
        database=":memory:", builtins=False, plugin_dirs=folders, embedder="hashing"
    )
    with Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="alice")
        governance = opened.governance
        assert governance is not None and governance.identities is not None
        governance.identities.providers.register(
            OAuth2Provider("google", server.url, "plugyard-test", timeout_s=0.5)
        )
        yield opened


def call(yard: Yard, plugin: str, params: dict[str, Any], who: str = "bob") -> Result:
    return asyncio.run(yard.call(plugin, None, params, subject=who, roles=("clerk",)))


def link(yard: Yard, who: str = "bob", scopes: tuple[str, ...] = ("gmail.readonly",)) -> None:
    governance = yard.governance
    assert governance is not None and governance.identities is not None
    asyncio.run(
        connect(
            governance.identities,
            who,
            "google",
            scopes=scopes,
            refresh_token=f"rt-{who}",
            target=f"{who}@example.com",
        )
    )


def test_gmail_digest_needs_a_connected_account(yard: Yard) -> None:
    result = call(yard, "gmail_digest", {"op": "digest", "messages": MESSAGES})
    assert result.error is not None and result.error.code == "missing_identity"
    assert result.error.details["provider"] == "google"
    assert result.error.details["scopes"] == ["gmail.readonly"]


def test_gmail_digest_ingests_as_the_account_host_auth_resolves(
    yard: Yard, server: LoopbackTokenServer
) -> None:
    link(yard)
    result = call(yard, "gmail_digest", {"op": "digest", "messages": MESSAGES})
    assert result.ok, result.error
    assert result.data["count"] == 2 and result.data["account"] == "bob@example.com"
    assert server.requests[0]["grant_type"] == "refresh_token"
    objects = yard.knowledge.repository.objects("mail")
    assert [o.source_type for o in objects] == ["plugin:gmail_digest"] * 2
    assert [o.source_id for o in objects] == ["m1", "m2"]
    # the token was cached: a second call asks the endpoint nothing
    again = call(yard, "gmail_digest", {"op": "digest", "messages": MESSAGES})
    assert again.ok and len(server.requests) == 1
    assert again.data["count"] == 2 and all(o.chunk_count == 1 for o in objects)


def test_op_auth_scopes_are_enforced_before_the_call(yard: Yard) -> None:
    link(yard)
    result = call(yard, "gmail_digest", {"op": "send"})
    assert result.error is not None and result.error.code == "insufficient_scopes"
    assert result.error.details["missing"] == ["gmail.send"]


@pytest.mark.parametrize(
    ("behaviour", "reason"), [("lie", "invalid_answer"), ("hang", "timeout"), ("refuse", "refused")]
)
def test_a_token_endpoint_that_hangs_or_lies(
    yard: Yard, server: LoopbackTokenServer, behaviour: str, reason: str
) -> None:
    link(yard)
    server.behaviour = behaviour  # type: ignore[assignment]
    result = call(yard, "gmail_digest", {"op": "digest", "messages": MESSAGES})
    assert result.error is not None and result.error.code == "auth_provider_error"
    assert yard.knowledge.repository.objects("mail") == []


def test_drive_ingestion_under_the_feeds_ocr_overlay(yard: Yard) -> None:
    from kb.documents import image_pdf, text_pdf

    files = [
        {
            "id": "f1",
            "name": "plan.pdf",
            "data": base64.b64encode(text_pdf("Launch plan")).decode(),
        },
        {"id": "f2", "name": "scan.pdf", "data": base64.b64encode(image_pdf("Scanned")).decode()},
    ]
    never = call(
        yard,
        "drive_ingest",
        {"files": files, "search": "launch plan", "__host": {"ocr": {"mode": "never"}}},
    )
    assert never.ok, never.error
    assert [i["extraction"]["method"] for i in never.data["ingested"]] == ["pdf_text"]
    assert never.skips == ({"id": "f2", "reason": "empty_extraction"},)
    top = never.data["found"]["results"][0]
    assert (
        top["source"]["source_id"] == "f1" and top["source"]["source_type"] == "plugin:drive_ingest"
    )
    bad = call(yard, "drive_ingest", {"files": [], "__host": {"ocr": {"mode": "sometimes"}}})
    assert bad.error is not None and bad.error.code == "invalid_parameters"


def test_a_plugin_may_not_write_into_a_kb_it_does_not_own(yard: Yard) -> None:
    files = [{"id": "f1", "name": "a.txt", "data": base64.b64encode(b"drive words").decode()}]
    assert call(yard, "drive_ingest", {"files": files, "kb_id": "shared"}).ok
    link(yard)
    result = call(yard, "gmail_digest", {"op": "digest", "messages": MESSAGES, "kb_id": "shared"})
    assert result.error is not None and result.error.code == "kb_access_denied"


def test_actions_from_list_actions_are_listed_and_performed(yard: Yard) -> None:
    admin = yard.admin
    listed = {
        a["name"]: a
        for a in admin.list_actions(Caller("bob", ("clerk",)))
        if a["plugin_id"] == "mail_actions"
    }
    assert set(listed) == {"mark_read", "send_reply"}
    assert listed["mark_read"]["required_scopes"] == ["gmail.modify"]
    assert listed["send_reply"]["requires_approval"] is True
    ctx = context_for("bob", ("clerk",), idempotency_key="k-1")
    done = asyncio.run(admin.perform_action("mail_actions", "mark_read", {"id": "7"}, ctx))
    assert done["status"] == "ok" and done["result"] == {"read": "7", "key": "k-1"}
    failed = asyncio.run(
        admin.perform_action(
            "mail_actions", "mark_read", {"id": "broken"}, context_for("bob", ("clerk",))
        )
    )
    assert failed["status"] == "error" and failed["error"]["code"] == "invalid_parameters"
    unknown = asyncio.run(
        admin.perform_action("mail_actions", "delete_all", {}, context_for("bob", ("clerk",)))
    )
    assert unknown["error"]["code"] == "action_not_found"


def test_an_action_needing_approval_waits_and_is_audited_with_its_approver(yard: Yard) -> None:
    admin = yard.admin
    args = {"to": "ann@x", "text": "yes"}
    pending = asyncio.run(
        admin.perform_action("mail_actions", "send_reply", args, context_for("bob", ("clerk",)))
    )
    assert pending["status"] == "pending_approval"
    assert pending["preview"]["params"] == args
    admin.decide(pending["action_id"], Caller("alice", ("boss",)), approve=True)
    done = asyncio.run(
        admin.perform_action(
            "mail_actions",
            "send_reply",
            args,
            context_for("bob", ("clerk",)),
            receipt=pending["receipt"],
        )
    )
    assert done["status"] == "ok" and done["result"] == {"sent_to": "ann@x"}
    calls = [r for r in admin.tail(50) if r.kind == "call" and r.operation == "send_reply"]
    assert calls[-1].approver == "alice" and calls[-1].status == "success"
