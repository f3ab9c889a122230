"""Approvals on the call path: the receipt state machine, and its attacks."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import GovernanceError
from plugyard.governance.approvals import RECEIPT_PREFIX, ApprovalDesk, receipt_hash
from plugyard.governance.digest import request_digest
from plugyard.manifest.model import Operation
from plugyard.store.store import Store
from plugyard.types import Caller

from .conftest import FunctionRuntime, Table, descriptor
from .governed import Governed, governed

SEND = Operation(
    id="send",
    kind="action",
    effect="write",
    parameters={"type": "object", "properties": {"to": {"type": "string"}}},
)
POLICY = """
subjects:
  bob: {roles: [clerk]}
  alice: {roles: [manager]}
  mallory: {roles: [clerk]}
grants:
  - {to: "role:clerk", plugin: mail, operation: send, effect: allow_with_approval}
  - {to: "role:manager", plugin: mail, operation: send, effect: allow_with_approval}
  - {to: "role:manager", plugin: "*", verb: approve, effect: allow}
"""


class Sent:
    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, to: str) -> dict[str, Any]:
        with self.lock:
            self.count += 1
        return {"sent_to": to}


@pytest.fixture
def sent(table: Table, runtime: FunctionRuntime) -> Sent:
    table.add(descriptor("mail", SEND))
    fn = Sent()
    runtime.functions[("mail", "send")] = fn
    return fn


@pytest.fixture
def gov(table: Table, runtime: FunctionRuntime, sent: Sent) -> Governed:
    del sent
    return governed(table, runtime, POLICY)


def approve(gov: Governed, action_id: str, who: str = "alice", yes: bool = True) -> Any:
    return gov.governance.approvals.decide(
        action_id, Caller(who), yes, may_approve=gov.book.may_approve
    )


def pending(gov: Governed, to: str = "x@example.org") -> dict[str, Any]:
    result = gov.call("mail", "send", {"to": to})
    assert result.status == "pending_approval"
    assert isinstance(result.data, dict)
    return result.data


def test_an_approval_call_waits_then_runs_once_with_its_receipt(gov: Governed, sent: Sent) -> None:
    data = pending(gov)
    assert sent.count == 0
    receipt = data["receipt"]
    assert receipt.startswith(RECEIPT_PREFIX) and len(receipt) - len(RECEIPT_PREFIX) >= 43
    early = gov.call("mail", "send", {"to": "x@example.org"}, receipt=receipt)
    assert early.error is not None and early.error.code == "approval_pending"
    row = approve(gov, data["action_id"])
    assert row.state == "approved" and row.decided_by == "alice"
    done = gov.call("mail", "send", {"to": "x@example.org"}, receipt=receipt)
    assert done.status == "success" and done.data == {"sent_to": "x@example.org"}
    assert sent.count == 1
    replay = gov.call("mail", "send", {"to": "x@example.org"}, receipt=receipt)
    assert replay.error is not None and replay.error.code == "receipt_used"
    assert sent.count == 1
    audited = [(r.status, r.error_code, r.approver) for r in gov.governance.audit.tail(10)]
    assert ("success", None, "alice") in audited
    assert ("error", "receipt_used", None) in audited


def test_the_receipt_is_stored_only_as_its_hash(gov: Governed) -> None:
    data = pending(gov)
    row = gov.governance.approvals.repository.get(data["action_id"])
    assert row is not None
    assert row.receipt_hash == receipt_hash(data["receipt"])
    assert data["receipt"] not in repr(row)


def test_a_receipt_for_other_parameters_is_refused(gov: Governed, sent: Sent) -> None:
    data = pending(gov, "x@example.org")
    approve(gov, data["action_id"])
    other = gov.call("mail", "send", {"to": "boss@example.org"}, receipt=data["receipt"])
    assert other.error is not None and other.error.code == "invalid_receipt"
    stolen = gov.call(
        "mail", "send", {"to": "x@example.org"}, subject="mallory", receipt=data["receipt"]
    )
    assert stolen.error is not None and stolen.error.code == "invalid_receipt"
    assert sent.count == 0
    # the rightful request still works: a refused attempt did not use the receipt up
    assert gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"]).ok


def test_an_expired_receipt_runs_nothing(gov: Governed, sent: Sent) -> None:
    now = [1000.0]
    desk = ApprovalDesk(gov.governance.approvals.repository, clock=lambda: now[0])
    gov.governance.approvals = desk
    data = pending(gov)
    approve(gov, data["action_id"])
    now[0] += 3601  # the default time to live is an hour
    late = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert late.error is not None and late.error.code == "receipt_expired"
    assert sent.count == 0


def test_an_approval_not_decided_in_time_cannot_be_approved(gov: Governed) -> None:
    now = [1000.0]
    gov.governance.approvals = ApprovalDesk(
        gov.governance.approvals.repository, clock=lambda: now[0]
    )
    data = pending(gov)
    now[0] += 7200
    with pytest.raises(GovernanceError) as caught:
        approve(gov, data["action_id"])
    assert caught.value.code == "receipt_expired"


@pytest.mark.parametrize(
    ("who", "code"),
    [
        ("mallory", "permission_denied"),
        ("bob", "permission_denied"),
        ("nobody", "permission_denied"),
    ],
)
def test_only_a_subject_allowed_to_approve_decides(gov: Governed, who: str, code: str) -> None:
    data = pending(gov)  # requested by bob: bob may not approve his own request either
    with pytest.raises(GovernanceError) as caught:
        approve(gov, data["action_id"], who)
    assert caught.value.code == code


def test_a_rejected_request_is_refused_and_cannot_be_approved_after(
    gov: Governed, sent: Sent
) -> None:
    data = pending(gov)
    approve(gov, data["action_id"], yes=False)
    with pytest.raises(GovernanceError) as caught:
        approve(gov, data["action_id"])
    assert caught.value.code == "approval_decided"
    result = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert result.error is not None and result.error.code == "approval_rejected"
    assert sent.count == 0


def test_the_policy_is_asked_again_when_the_receipt_is_used(gov: Governed, sent: Sent) -> None:
    data = pending(gov)
    approve(gov, data["action_id"])
    gov.book.load_text(POLICY + '  - {to: "subject:bob", plugin: mail, effect: deny}\n')
    result = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert result.error is not None and result.error.code == "permission_denied"
    assert sent.count == 0


def test_ten_thousand_guessed_receipts_are_all_refused(gov: Governed, sent: Sent) -> None:
    data = pending(gov)
    approve(gov, data["action_id"])
    digest = request_digest("mail", "send", {"to": "x@example.org"}, "bob")
    desk = gov.governance.approvals
    codes: list[str] = []
    for i in range(10_000):
        guess = RECEIPT_PREFIX + secrets.token_urlsafe(32) if i % 4 else secrets.token_hex(i % 40)
        try:
            desk.redeem(guess, digest)
            codes.append("accepted")
        except GovernanceError as exc:
            codes.append(exc.code)
    assert codes.count("accepted") == 0
    assert set(codes) == {"invalid_receipt"}
    real = data["receipt"]
    last = "B" if real.endswith("A") else "A"  # one character off, never the receipt itself
    for guess in (real[:-1] + last, real.upper(), "", "pyr_"):
        result = gov.call("mail", "send", {"to": "x@example.org"}, receipt=guess)
        assert result.error is not None and result.error.code == "invalid_receipt"
    assert sent.count == 0


def test_sixteen_concurrent_uses_of_one_receipt_run_it_exactly_once(
    table: Table, runtime: FunctionRuntime, sent: Sent, tmp_path: Path
) -> None:
    database = str(tmp_path / "approvals.db")
    first = governed(table, runtime, POLICY, Store.open(database))
    data = pending(first)
    approve(first, data["action_id"])
    # sixteen executors, each with its own connection to the one database
    racers = [governed(table, runtime, store=Store.open(database)) for _ in range(16)]
    start = threading.Barrier(16)
    outcomes: list[str] = []

    def race(g: Governed) -> None:
        start.wait()
        result = g.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
        outcomes.append(result.status if result.ok else result.error.code)  # type: ignore[union-attr]

    threads = [threading.Thread(target=race, args=(g,)) for g in racers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sent.count == 1
    assert sorted(outcomes) == ["receipt_used"] * 15 + ["success"]


def test_a_refusal_before_the_run_does_not_spend_the_receipt(
    table: Table, runtime: FunctionRuntime
) -> None:
    """A call refused for a missing secret (or bad parameters) keeps its receipt: the
    retry after the operator adds the secret runs, instead of answering receipt_used."""
    from plugyard.manifest.model import OpAuth, SecretRequirement

    table.add(
        descriptor(
            "mail",
            SEND,
            host_capabilities=("secrets",),
            op_auth={"send": OpAuth(secrets={"smtp_password": SecretRequirement()})},
        )
    )
    sent = Sent()
    runtime.functions[("mail", "send")] = sent
    gov = governed(table, runtime, POLICY)
    data = pending(gov)
    approve(gov, data["action_id"])
    first = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert first.error is not None and first.error.code == "missing_secrets"
    gov.governance.vault.set("smtp_password", "hunter2-but-longer")
    second = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert second.ok and sent.count == 1
    third = gov.call("mail", "send", {"to": "x@example.org"}, receipt=data["receipt"])
    assert third.error is not None and third.error.code == "receipt_used"
