"""Feeds: only feed-safe operations, run as their owner when due, cursor and watermark
kept per feed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import GovernanceError
from plugyard.feeds.schedule import next_run
from plugyard.feeds.scheduler import FeedScheduler
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext, Outcome, Target

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from execution.conftest import Table, descriptor
from governance.governed import governed


class ContextRuntime:
    kind = "python"

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, dict[str, Any], dict[str, Any]]] = []

    def check(self, target: Target) -> str | None:
        return None

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Outcome:
        self.seen.append((context.subject, params, dict(context.session)))
        n = len(self.seen)
        return Outcome(data={"items": n, "watermark": f"w{n}"}, next_cursor=f"c{n}")


POLICY = """
subjects: {bob: {roles: [reader]}}
grants: [{to: "role:reader", plugin: mail, operation: digest, effect: allow}]
"""


@pytest.fixture
def setup() -> tuple[FeedScheduler, ContextRuntime, list[float]]:
    table, runtime = Table(), ContextRuntime()
    table.add(
        descriptor(
            "mail",
            Operation(id="digest"),
            Operation(id="send", effect="write"),
            default_feed_op="digest",
            allowed_feed_ops=("digest",),
        )
    )
    table.add(descriptor("plain", Operation(id="a"), Operation(id="b")))
    g = governed(table, runtime, POLICY)  # type: ignore[arg-type]
    now = [1_000_000.0]
    scheduler = FeedScheduler(
        g.executor, g.governance.feeds, g.governance.kv, table, clock=lambda: now[0]
    )
    return scheduler, runtime, now


def test_only_allowed_feed_ops_may_be_scheduled(setup: Any) -> None:
    scheduler, _, _ = setup
    assert scheduler.add(owner="bob", plugin_id="mail", interval_s=60).operation == "digest"
    for plugin, op in (("mail", "send"), ("plain", None), ("plain", "zzz")):
        with pytest.raises(GovernanceError) as caught:
            scheduler.add(owner="bob", plugin_id=plugin, operation=op, interval_s=60)
        assert caught.value.code == "invalid_feed_op"
    assert scheduler.add(owner="bob", plugin_id="plain", operation="a", interval_s=60)


@pytest.mark.parametrize(
    ("interval", "cron"), [(None, None), (0.1, None), (60, "* * * * *"), (None, "not cron")]
)
def test_a_bad_schedule_is_refused(setup: Any, interval: float | None, cron: str | None) -> None:
    scheduler, _, _ = setup
    with pytest.raises(GovernanceError) as caught:
        scheduler.add(owner="bob", plugin_id="mail", interval_s=interval, cron=cron)
    assert caught.value.code == "invalid_schedule"


def test_due_feeds_run_as_their_owner_with_cursor_and_watermark(setup: Any) -> None:
    scheduler, runtime, now = setup
    feed = scheduler.add(owner="bob", plugin_id="mail", interval_s=60, params={"q": 1})
    assert [t.status for t in asyncio.run(scheduler.run_due())] == ["success"]
    assert asyncio.run(scheduler.run_due()) == []  # not due again yet
    now[0] += 61
    assert [t.next_cursor for t in asyncio.run(scheduler.run_due())] == ["c2"]
    first, second = runtime.seen
    assert first[0] == "bob" and first[1] == {"q": 1}
    assert second[2] == {"feed_id": feed.id, "cursor": "c1", "watermark": "w1", "watermarks": {}}
    stored = scheduler.get(feed.id)
    assert stored.runs == 2 and stored.next_cursor == "c2" and stored.last_status == "success"


def test_a_feed_is_refused_when_its_owner_may_not_call(setup: Any) -> None:
    scheduler, runtime, _ = setup
    scheduler.add(owner="mallory", plugin_id="mail", interval_s=60)
    ticks = asyncio.run(scheduler.run_due())
    assert [t.error_code for t in ticks] == ["permission_denied"] and runtime.seen == []


def test_cron_schedules_follow_the_expression() -> None:
    after = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    assert next_run(None, "0 * * * *", after) == 1_700_002_800.0  # the next full hour
    assert next_run(30, None, after) == after + 30
    assert next_run(None, None, after) is None
