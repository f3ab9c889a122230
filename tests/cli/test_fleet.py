"""Two ``plugyard serve`` replicas on one PostgreSQL database, requests spread over both:
what one registers the other calls; one idempotency key and one approval receipt take
effect once in the fleet; the audit stays one verified chain; and when one replica is
killed mid-load the other keeps serving and no acknowledged call is missing from the
audit. Skipped without PostgreSQL (failed on CI, like the store suite)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from plugyard.store import testing
from plugyard.store.keys import ADMIN_ROLE, SqlKeyRepository
from plugyard.store.store import Store

from .fleet import EffectServer, Replica, registration, replicas

POLICY = """
grants:
  - {to: "role:clerk", plugin: effects, operation: effect, effect: allow_with_approval}
  - {to: "role:manager", plugin: "*", verb: approve, effect: allow}
  - {to: "role:admin", plugin: "*", effect: allow}
"""
PROPAGATION_S = 10.0  # generous on a loaded machine; bench/fleet.py measures the p99


@pytest.fixture(scope="module")
def database() -> Iterator[URL]:
    server = testing.server_url()
    reason = testing.unreachable(server)
    if reason is not None:
        if testing.on_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    with testing.temporary_database(server) as url:
        yield url


@pytest.fixture
def effects() -> Iterator[EffectServer]:
    server = EffectServer()
    yield server
    server.close()


def _keys(url: str) -> dict[str, str]:
    with Store.open(url) as store:
        keys = SqlKeyRepository(store)
        return {
            "admin": keys.create("ops", (ADMIN_ROLE,))[1],
            "bob": keys.create("bob", ("clerk",))[1],
            "alice": keys.create("alice", ("manager",))[1],
            "temp": keys.create("temp", (ADMIN_ROLE,))[1],
        }


def _revoke(url: str, subject: str) -> None:
    # What `plugyard keys revoke` does from any machine: a write to the shared store.
    with Store.open(url) as store:
        keys = SqlKeyRepository(store)
        for info in keys.list():
            if info.subject == subject:
                keys.revoke(info.id)


def _until(check: object, deadline_s: float) -> bool:
    # Polls a remote process: there is no event to wait on across processes.
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def _execute(replica: Replica, key: str, n: int, **headers: str) -> tuple[int, dict]:
    body = {"operation": "effect", "parameters": {"n": n}}
    return replica.request("POST", "/api/v1/plugins/effects/execute", body, key, **headers)


def test_a_fleet_of_two_replicas(database: URL, effects: EffectServer, tmp_path: Path) -> None:
    testing.reset_database(database)
    url = database.render_as_string(hide_password=False)
    keys = _keys(url)
    allow = f"127.0.0.1:{effects.port}"
    with replicas(url, 2, tmp_path, allow) as (a, b):
        admin = keys["admin"]
        # Registration on A, call on B.
        status, _ = a.request("POST", "/api/v1/plugins/register", registration(effects), admin)
        assert status == 200
        assert _until(lambda: _execute(b, admin, 0)[0] == 200, PROPAGATION_S)
        assert effects.effects == 1

        # One idempotency key, 16 concurrent requests over both replicas: one effect.
        before = effects.effects
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(
                lambda i: _execute((a, b)[i % 2], admin, 1, Idempotency_Key="fleet-once-1"),
                range(16),
            ))  # fmt: skip
        assert effects.effects == before + 1
        assert any(status == 200 for status, _ in answers)

        # A policy loaded on A governs B; one receipt redeemed on both: one execution.
        status, _ = a.request("PUT", "/api/v1/policy", POLICY, admin)
        assert status == 200
        assert _until(lambda: _execute(b, keys["bob"], 2)[1].get("status") == "pending_approval",
                      PROPAGATION_S)  # fmt: skip
        status, pending = _execute(a, keys["bob"], 3)
        action_id, receipt = pending["data"]["action_id"], pending["data"]["receipt"]
        status, _ = b.request("POST", f"/api/v1/approvals/{action_id}/approve", {}, keys["alice"])
        assert status == 200
        before = effects.effects
        body = {"operation": "effect", "parameters": {"n": 3}, "approval_receipt": receipt}
        start = threading.Barrier(2)

        def redeem(replica: Replica) -> int:
            start.wait()
            return replica.request("POST", "/api/v1/plugins/effects/execute", body, keys["bob"])[0]

        with ThreadPoolExecutor(2) as pool:
            statuses = list(pool.map(redeem, (a, b)))
        assert effects.effects == before + 1
        assert sorted(statuses)[0] == 200

        # A key revoked anywhere is refused by both replicas.
        assert _execute(a, keys["temp"], 4)[0] == 200 and _execute(b, keys["temp"], 4)[0] == 200
        _revoke(url, "temp")
        assert _until(
            lambda: (
                _execute(a, keys["temp"], 5)[0] == 401 and _execute(b, keys["temp"], 5)[0] == 401
            ),
            PROPAGATION_S,
        )

        # Kill -9 A mid-load: B keeps serving; every acknowledged call is audited.
        acknowledged: list[str] = []
        lock = threading.Lock()

        def call(i: int) -> None:
            replica = (a, b)[i % 2]
            try:
                status, result = _execute(replica, admin, 100 + i)
            except OSError:
                return  # A is gone: not acknowledged, so not owed to the audit
            if status == 200 and result.get("request_id"):
                with lock:
                    acknowledged.append(str(result["request_id"]))

        with ThreadPoolExecutor(8) as pool:
            first = list(pool.map(call, range(40)))
            a.kill()
            second = list(pool.map(call, range(40, 80)))
        assert len(first) == len(second) == 40
        served_by_b = [_execute(b, admin, 999)[0] for _ in range(5)]
        assert served_by_b == [200] * 5
        status, verified = b.request("GET", "/api/v1/audit/verify", key=admin)
        assert status == 200 and verified["ok"] is True
        status, tail = b.request("GET", "/api/v1/audit?count=1000", key=admin)
        audited = {event.get("request_id") for event in tail}
        assert acknowledged and set(acknowledged) <= audited
