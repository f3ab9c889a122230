"""An action goes pending, is approved by someone else, and runs once."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from .conftest import codes, csrf_of


def sent(admin: TestClient, keys: dict[str, str]) -> int:
    """How many messages the mailer has sent (its outbox, over the REST API)."""
    reply = admin.post("/api/v1/plugins/mailer/execute?operation=outbox", json={},
                       headers={"X-API-Key": keys["admin"]})  # fmt: skip
    return int(reply.json()["data"]["count"])


def ask_to_send(clerk: TestClient) -> str:
    page = clerk.get("/console/plugins/mailer/run/send").text
    reply = clerk.post("/console/plugins/mailer/run/send",
                       data={"csrf_token": csrf_of(page), "/to": "ann@example.org"})  # fmt: skip
    assert "pending_approval" in codes(reply.text)
    assert 'href="/console/approvals#req-' in reply.text
    found = re.search(r"#req-([^\"]+)\"", reply.text)
    assert found is not None
    return found.group(1)


def test_pending_approved_then_run_once(
    clerk: TestClient, admin: TestClient, keys: dict[str, str]
) -> None:
    sent_before = sent(admin, keys)
    action = ask_to_send(clerk)
    mine = clerk.get("/console/approvals").text
    assert f'data-action="{action}" data-state="pending"' in mine
    inbox = admin.get("/console/approvals").text
    assert f'data-action="{action}"' in inbox and "ann@example.org" in inbox
    decided = admin.post(f"/console/approvals/{action}/decide",
                         data={"csrf_token": csrf_of(inbox), "decision": "approve",
                               "note": "fine"})  # fmt: skip
    assert decided.status_code == 200 and "Request approved." in decided.text
    after = clerk.get("/console/approvals").text
    assert f'data-action="{action}" data-state="approved"' in after and "by admin" in after
    ran = clerk.post(f"/console/approvals/{action}/run", data={"csrf_token": csrf_of(after)})
    assert ran.status_code == 200 and 'data-status="success"' in ran.text
    assert sent(admin, keys) == sent_before + 1
    again = clerk.post(f"/console/approvals/{action}/run", data={"csrf_token": csrf_of(after)})
    assert "invalid_receipt" in codes(again.text)
    assert sent(admin, keys) == sent_before + 1


def test_nobody_approves_their_own_request(clerk: TestClient) -> None:
    action = ask_to_send(clerk)
    page = clerk.get("/console/approvals").text
    assert 'class="to-decide"' not in page
    reply = clerk.post(f"/console/approvals/{action}/decide",
                       data={"csrf_token": csrf_of(page), "decision": "approve"})  # fmt: skip
    assert reply.status_code == 403


def test_a_rejected_request_never_runs(
    clerk: TestClient, admin: TestClient, keys: dict[str, str]
) -> None:
    sent_before = sent(admin, keys)
    action = ask_to_send(clerk)
    inbox = admin.get("/console/approvals").text
    admin.post(f"/console/approvals/{action}/decide",
               data={"csrf_token": csrf_of(inbox), "decision": "reject"})  # fmt: skip
    page = clerk.get("/console/approvals").text
    assert f'data-action="{action}" data-state="rejected"' in page
    assert f"/console/approvals/{action}/run" not in page
    assert sent(admin, keys) == sent_before
