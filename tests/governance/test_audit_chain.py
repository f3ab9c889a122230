"""The durable audit chain: it verifies, it names where it breaks, and a writer killed
with SIGKILL loses no acknowledged event."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import multiprocessing
import os
import random
import signal
import sqlite3
from pathlib import Path
from typing import Any

from plugyard.errors import StoreError
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.audit.event import AuditEvent
from plugyard.governance.core import Governance
from plugyard.governance.secrets.keys import AUDIT_KEY, load_key
from plugyard.store.audit import SqlAuditRepository
from plugyard.store.store import Store

from .governed import KEYS


def fill(audit: ChainedAudit, n: int) -> None:
    for i in range(n):
        audit.append(
            "call",
            status="success",
            subject="bob",
            plugin_id="p",
            operation="o",
            request_id=f"r{i}",
            params_hash="0" * 64,
            decision="allow",
        )


def test_an_untouched_chain_verifies(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "a.db"))
    audit = Governance.over(store, environ=KEYS).audit
    fill(audit, 50)
    check = audit.verify(page=7)
    assert check.ok and check.events == 50 and check.head_seq == 50


def test_editing_a_row_breaks_the_chain_at_that_row(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "a.db"))
    audit = Governance.over(store, environ=KEYS).audit
    fill(audit, 20)
    store.close()
    with sqlite3.connect(tmp_path / "a.db") as db:
        db.execute("UPDATE audit_events SET status = 'error' WHERE seq = 13")
    check = ChainedAudit(
        SqlAuditRepository(Store.open(str(tmp_path / "a.db"))),
        bytes.fromhex(KEYS["PLUGYARD_AUDIT_KEY"]),
    ).verify()
    assert not check.ok and check.broken_at == 13 and check.events == 12


def test_deleting_a_row_or_using_another_key_is_detected() -> None:
    store = Store.open(":memory:")
    repo = SqlAuditRepository(store)
    audit = ChainedAudit(repo, b"k" * 32)
    fill(audit, 5)
    assert not ChainedAudit(repo, b"x" * 32).verify().ok
    with store.writing() as connection:
        connection.exec_driver_sql("DELETE FROM audit_events WHERE seq = 3")
    check = audit.verify()
    assert not check.ok and check.broken_at == 4 and "sequence" in (check.reason or "")


def test_an_event_recomputed_without_the_key_does_not_verify() -> None:
    store = Store.open(":memory:")
    audit = ChainedAudit(SqlAuditRepository(store), b"k" * 32)
    fill(audit, 3)
    with store.writing() as connection:  # the row rewritten, its hash left as it was
        connection.exec_driver_sql("UPDATE audit_events SET subject = 'mallory' WHERE seq = 2")
    assert audit.verify().broken_at == 2


def test_keys_come_from_the_environment_or_a_file_created_once(tmp_path: Path) -> None:
    first = load_key(AUDIT_KEY, tmp_path, {})
    assert (tmp_path / "audit.key").exists()
    assert oct((tmp_path / "audit.key").stat().st_mode & 0o777) == "0o600"
    assert load_key(AUDIT_KEY, tmp_path, {}) == first
    assert load_key(AUDIT_KEY, tmp_path, {"PLUGYARD_AUDIT_KEY": "ab" * 32}) == b"\xab" * 32


# ------------------------------------------------------------- kill -9, 30 rounds

ROUNDS = 30


def _writer(database: str, acks: Any) -> None:
    audit = Governance.over(Store.open(database), environ=KEYS).audit
    i = 0
    while True:
        record = audit.append(
            "call",
            status="success",
            request_id=f"w{os.getpid()}-{i}",
            subject="bob",
            plugin_id="p",
            operation="o",
        )
        acks.send(record.seq)  # acknowledged only once committed
        i += 1


def test_killing_a_writer_thirty_times_loses_no_acknowledged_event(tmp_path: Path) -> None:
    database = str(tmp_path / "kill.db")
    Store.open(database).close()
    context = multiprocessing.get_context("fork")
    acknowledged: list[int] = []
    rng = random.Random(7)
    for _ in range(ROUNDS):
        receiving, sending = context.Pipe(duplex=False)
        writer = context.Process(target=_writer, args=(database, sending))
        writer.start()
        sending.close()
        wanted = rng.randint(1, 40)
        for _ in range(wanted):
            acknowledged.append(receiving.recv())
        os.kill(writer.pid or 0, signal.SIGKILL)  # mid-stream: it is still writing
        writer.join()
        receiving.close()
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {row[0] for row in db.execute("SELECT seq FROM audit_events")}
    assert set(acknowledged) <= stored  # 0 acknowledged events lost
    check = Governance.over(Store.open(database), environ=KEYS).audit.verify()
    assert check.ok, check
    assert check.events == len(stored) >= len(acknowledged)


# ------------------------------------------------------------------ group commit


def _event(i: int) -> AuditEvent:
    return AuditEvent(f"r{i}", "bob", "p", "o", "0" * 64, "allow", "success", None, 0.0, 0.1)


class CountingRepository(SqlAuditRepository):
    def __init__(self, fail: bool = False) -> None:
        super().__init__(Store.open(":memory:"))
        self.batches: list[int] = []
        self.fail = fail

    def append_many(self, items: list[Any]) -> list[Any]:
        self.batches.append(len(items))
        if self.fail:
            raise StoreError("disk full", code="store_error")
        return super().append_many(items)


def test_a_lone_call_commits_at_once_and_the_rest_of_its_turn_share_one_commit() -> None:
    repository = CountingRepository()
    audit = ChainedAudit(repository, b"k" * 32)

    async def call(i: int) -> None:
        audit.emit(_event(i))
        await audit.settle()  # acknowledged only after the commit

    async def main() -> None:
        await asyncio.gather(*(call(i) for i in range(16)))

    asyncio.run(main())
    assert repository.batches == [1, 15]
    assert audit.verify().events == 16 and audit.verify().ok


def test_a_failed_group_commit_reaches_every_waiter() -> None:
    audit = ChainedAudit(CountingRepository(fail=True), b"k" * 32)

    async def call(i: int) -> str:
        try:
            audit.emit(_event(i))  # the first of the turn commits here, and fails here
            await audit.settle()
        except StoreError as exc:
            return exc.code
        return "acknowledged"

    async def main() -> list[str]:
        return await asyncio.gather(*(call(i) for i in range(4)))

    assert asyncio.run(main()) == ["store_error"] * 4


def test_each_hash_is_the_keyed_hmac_of_the_previous_hash_and_the_rows_sorted_json() -> None:
    # The chain's format, restated with the standard library: chains written by earlier
    # versions must keep verifying.
    key = b"k" * 32
    audit = ChainedAudit(SqlAuditRepository(Store.open(":memory:")), key)
    audit.append(
        "call",
        status="success",
        subject="bøb",
        plugin_id="p",
        operation="o",
        duration_ms=1.25,
        detail={"z": 1, "a": [True, None, {"y": "x", "b": 2.5}]},
    )
    audit.append("policy", status="success", subject="alice")
    prev = "0" * 64
    for record in audit.tail(2):
        columns = dict(zip(record._fields[:-1], record[:-1], strict=True))
        body = json.dumps(columns, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        expected = hmac.new(key, prev.encode() + body.encode(), hashlib.sha256).hexdigest()
        assert (record.prev_hash, record.hash) == (prev, expected)
        prev = record.hash


def test_a_cancelled_waiter_leaves_the_others_waiting_for_the_commit() -> None:
    repository = CountingRepository()
    audit = ChainedAudit(repository, b"k" * 32)

    async def call(i: int) -> str:
        audit.emit(_event(i))
        await audit.settle()
        return "acknowledged"

    async def main() -> list[Any]:
        tasks = [asyncio.create_task(call(i)) for i in range(4)]
        await asyncio.sleep(0)  # every task has emitted and waits for the turn's commit
        tasks[1].cancel()
        return await asyncio.gather(*tasks, return_exceptions=True)

    outcomes = asyncio.run(main())
    assert outcomes[0] == outcomes[2] == outcomes[3] == "acknowledged"
    assert isinstance(outcomes[1], asyncio.CancelledError)
    assert repository.batches == [1, 3] and audit.verify().events == 4


def _group_writer(database: str, acks: Any) -> None:
    governance = Governance.over(Store.open(database), environ=KEYS)
    audit = governance.audit

    async def one(i: int) -> None:
        while True:
            audit.emit(_event(i))
            await audit.settle()
            acks.send(len(audit))  # acknowledged only once its batch committed

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(8)))

    asyncio.run(main())


def test_killing_a_group_committing_writer_loses_no_acknowledged_event(tmp_path: Path) -> None:
    database = str(tmp_path / "group.db")
    Store.open(database).close()
    context = multiprocessing.get_context("fork")
    acknowledged = 0
    for wanted in (5, 40, 17, 64, 3, 29, 50, 8, 33, 21):
        receiving, sending = context.Pipe(duplex=False)
        writer = context.Process(target=_group_writer, args=(database, sending))
        writer.start()
        sending.close()
        for _ in range(wanted):
            receiving.recv()
        acknowledged += wanted
        os.kill(writer.pid or 0, signal.SIGKILL)
        writer.join()
        receiving.close()
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = db.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    assert stored >= acknowledged  # every acknowledged event is there
    check = Governance.over(Store.open(database), environ=KEYS).audit.verify()
    assert check.ok, check
