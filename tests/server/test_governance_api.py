"""Governance over HTTP: policy, approvals, actions, the execute route's receipt and
idempotency key, audit, secrets, feeds — and a caller never sees what it may not call."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from plugyard.yard import Yard

POLICY = """
grants:
  - {to: "role:clerk", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "role:clerk", plugin: mailer, operation: outbox, effect: allow}
  - {to: "role:manager", plugin: "*", verb: approve, effect: allow}
  - {to: "role:manager", plugin: mailer, effect: allow}
"""


def h(key: str, **extra: str) -> dict[str, str]:
    return {"X-API-Key": key, **extra}


def code_of(reply: Any) -> str:
    return str(reply.json()["error"]["message"]["error"])


@pytest.fixture
def keys(yard: Yard, admin_key: str) -> dict[str, str]:
    return {
        "admin": admin_key,
        "bob": yard.keys.create("bob", ("clerk",))[1],
        "alice": yard.keys.create("alice", ("manager",))[1],
        "eve": yard.keys.create("eve", ("visitor",))[1],
    }


@pytest.fixture
def governed(client: TestClient, keys: dict[str, str]) -> TestClient:
    reply = client.put("/api/v1/policy", content=POLICY, headers=h(keys["admin"]))
    assert reply.status_code == 200, reply.text
    return client


def outbox(client: TestClient, key: str) -> int:
    reply = client.post("/api/v1/plugins/mailer/execute?operation=outbox", json={},
                        headers=h(key))  # fmt: skip
    assert reply.status_code == 200, reply.text
    return int(reply.json()["data"]["count"])


def test_only_an_admin_reads_or_replaces_the_policy(
    client: TestClient, keys: dict[str, str]
) -> None:
    refused = client.put("/api/v1/policy", content=POLICY, headers=h(keys["bob"]))
    assert refused.status_code == 403 and code_of(refused) == "permission_denied"
    loaded = client.put("/api/v1/policy", content=POLICY, headers=h(keys["admin"]))
    version = loaded.json()["version"]
    shown = client.get("/api/v1/policy", headers=h(keys["admin"])).json()
    assert shown["version"] == version and shown["state"] == "active"


def test_a_malformed_policy_is_refused_and_the_old_one_stays(
    governed: TestClient, keys: dict[str, str]
) -> None:
    before = governed.get("/api/v1/policy", headers=h(keys["admin"])).json()["version"]
    bad = governed.put("/api/v1/policy", content="grants: [{to: 3, effect: maybe}]",
                       headers=h(keys["admin"]))  # fmt: skip
    assert bad.status_code == 422 and code_of(bad) == "policy_invalid"
    after = governed.get("/api/v1/policy", headers=h(keys["admin"])).json()["version"]
    assert after == before


def test_an_action_waits_for_approval_then_runs_once_with_its_receipt(
    governed: TestClient, keys: dict[str, str]
) -> None:
    start = outbox(governed, keys["alice"])
    asked = governed.post("/api/v1/actions/mailer/send", json={"args": {"to": "x@example.org"}},
                          headers=h(keys["bob"])).json()  # fmt: skip
    assert asked["status"] == "pending_approval" and asked["receipt"]
    assert outbox(governed, keys["alice"]) == start
    listed = governed.get("/api/v1/approvals", headers=h(keys["alice"])).json()
    assert [a["action_id"] for a in listed] == [asked["action_id"]]
    assert governed.get("/api/v1/approvals", headers=h(keys["eve"])).json() == []
    own = governed.post(f"/api/v1/approvals/{asked['action_id']}/approve", headers=h(keys["bob"]))
    assert own.status_code == 403 and code_of(own) == "permission_denied"
    ok = governed.post(f"/api/v1/approvals/{asked['action_id']}/approve",
                       json={"note": "fine"}, headers=h(keys["alice"]))  # fmt: skip
    assert ok.status_code == 200 and ok.json()["state"] == "approved"
    body = {"args": {"to": "x@example.org"}, "approval_receipt": asked["receipt"]}
    done = governed.post("/api/v1/actions/mailer/send", json=body, headers=h(keys["bob"]))
    assert done.json()["status"] == "ok"
    again = governed.post("/api/v1/actions/mailer/send", json=body, headers=h(keys["bob"]))
    assert again.json()["status"] == "error" and again.json()["error"]["code"] == "receipt_used"
    assert outbox(governed, keys["alice"]) == start + 1


def test_the_execute_route_takes_a_receipt_and_an_idempotency_key(
    governed: TestClient, keys: dict[str, str]
) -> None:
    start = outbox(governed, keys["alice"])
    url = "/api/v1/plugins/mailer/execute?operation=send"
    params = {"parameters": {"to": "y@example.org"}}
    pending = governed.post(url, json=params, headers=h(keys["bob"])).json()
    assert pending["status"] == "pending_approval"
    action_id, receipt = pending["data"]["action_id"], pending["data"]["receipt"]
    governed.post(f"/api/v1/approvals/{action_id}/approve", headers=h(keys["alice"]))
    forged = governed.post(url, json={**params, "approval_receipt": receipt[:-2] + "xx"},
                           headers=h(keys["bob"]))  # fmt: skip
    assert forged.status_code == 403 and code_of(forged) == "invalid_receipt"
    retry = h(keys["bob"], **{"Idempotency-Key": "send-y-1"})
    first = governed.post(url, json={**params, "approval_receipt": receipt}, headers=retry)
    second = governed.post(url, json={**params, "approval_receipt": receipt}, headers=retry)
    assert first.status_code == second.status_code == 200
    assert first.json()["data"] == second.json()["data"] == {"sent_to": "y@example.org"}
    assert outbox(governed, keys["alice"]) == start + 1


def test_listings_search_and_show_hide_what_the_caller_may_not_call(
    governed: TestClient, keys: dict[str, str]
) -> None:
    def listed(key: str) -> set[str]:
        palette = governed.get("/api/v1/plugins", headers=h(key)).json()
        return {p["id"] for section in palette["sections"] for p in section["plugins"]}

    assert "mailer" in listed(keys["bob"])
    assert listed(keys["eve"]) == set()
    hidden = governed.get("/api/v1/plugins/mailer", headers=h(keys["eve"]))
    assert hidden.status_code == 404 and code_of(hidden) == "plugin_not_found"
    found = governed.get("/api/v1/search", params={"q": "send mail", "k": 5},
                         headers=h(keys["eve"])).json()  # fmt: skip
    assert found["matches"] == []
    mine = governed.get("/api/v1/search", params={"q": "send mail", "k": 5},
                        headers=h(keys["bob"])).json()  # fmt: skip
    assert [m["plugin"] for m in mine["matches"]] == ["mailer"]


def test_the_audit_log_is_for_admins_and_verifies(
    governed: TestClient, keys: dict[str, str]
) -> None:
    outbox(governed, keys["bob"])
    assert governed.get("/api/v1/audit/verify", headers=h(keys["bob"])).status_code == 403
    check = governed.get("/api/v1/audit/verify", headers=h(keys["admin"])).json()
    assert check["ok"] is True and check["events"] >= 2
    tail = governed.get("/api/v1/audit", params={"count": 5}, headers=h(keys["admin"])).json()
    assert tail[-1]["plugin_id"] == "mailer" and tail[-1]["subject"] == "bob"
    assert all("parameters" not in row for row in tail)


def test_secrets_are_set_listed_and_deleted_but_never_shown(
    governed: TestClient, keys: dict[str, str]
) -> None:
    canary = "canary-Zq8wPp1"
    stored = governed.put("/api/v1/secrets/smtp_password", json={"value": canary},
                          headers=h(keys["bob"]))  # fmt: skip
    assert stored.status_code == 200 and canary not in stored.text
    assert stored.json()["owner"] == "bob"
    listed = governed.get("/api/v1/secrets", headers=h(keys["bob"]))
    assert [s["name"] for s in listed.json()] == ["smtp_password"] and canary not in listed.text
    assert governed.get("/api/v1/secrets", headers=h(keys["alice"])).json() == []
    system = governed.put("/api/v1/secrets/x?scope=system", json={"value": "v"},
                          headers=h(keys["bob"]))  # fmt: skip
    assert system.status_code == 403 and code_of(system) == "permission_denied"
    assert (
        governed.delete("/api/v1/secrets/smtp_password", headers=h(keys["bob"])).status_code == 200
    )
    gone = governed.delete("/api/v1/secrets/smtp_password", headers=h(keys["bob"]))
    assert gone.status_code == 404 and code_of(gone) == "secret_not_found"
    tail = governed.get("/api/v1/audit", params={"count": 50}, headers=h(keys["admin"]))
    assert canary not in tail.text


def test_feeds_are_added_listed_and_deleted_by_their_owner(
    governed: TestClient, keys: dict[str, str]
) -> None:
    unnamed = governed.post("/api/v1/feeds", json={"plugin_id": "mailer", "interval_s": 60},
                            headers=h(keys["bob"]))  # fmt: skip
    assert unnamed.status_code == 400 and code_of(unnamed) == "invalid_feed_op"
    bad = governed.post("/api/v1/feeds", json={"plugin_id": "ticker", "cron": "not a cron"},
                        headers=h(keys["bob"]))  # fmt: skip
    assert bad.status_code == 400 and code_of(bad) == "invalid_schedule"
    feed_body = {"plugin_id": "mailer", "operation": "outbox", "interval_s": 60}
    added = governed.post("/api/v1/feeds", json=feed_body, headers=h(keys["bob"]))
    assert added.status_code == 201, added.text
    feed = added.json()
    assert feed["owner"] == "bob" and feed["operation"] == "outbox"
    assert [f["id"] for f in governed.get("/api/v1/feeds", headers=h(keys["bob"])).json()] == [
        feed["id"]
    ]
    assert governed.get("/api/v1/feeds", headers=h(keys["eve"])).json() == []
    stranger = governed.delete(f"/api/v1/feeds/{feed['id']}", headers=h(keys["eve"]))
    assert stranger.status_code == 404 and code_of(stranger) == "feed_not_found"
    assert governed.delete(f"/api/v1/feeds/{feed['id']}", headers=h(keys["bob"])).status_code == 200
