"""Feeds of op-style plugins (Shu: the op is a parameter of execute): the seed's
gmail_digest schedules with its default_feed_op, runs with per-source watermarks, keeps
its next_cursor; allowed_feed_ops is enforced on ops, not on the operation's name."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.errors import GovernanceError
from plugyard.feeds.ops import feed_call
from plugyard.governance.identities.loopback import LoopbackTokenServer
from plugyard.governance.identities.oauth2 import OAuth2Provider
from plugyard.governance.identities.op_auth import connect
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.yard import Settings, Yard

PLUGINS = Path(__file__).resolve().parents[1] / "shu_plugins"
POLICY = """
subjects: {bob: {roles: [clerk]}}
grants: [{to: "role:clerk", plugin: "*", effect: allow}]
"""
MESSAGES = [{"id": f"m{n}", "subject": f"Note {n}", "body": f"body {n}"} for n in (1, 2)]


@pytest.fixture
def yard() -> Iterator[Yard]:
    accounts = {"rt-bob": (("gmail.readonly",), "bob@example.com")}
    settings = Settings(
        database=":memory:",
        builtins=False,
        plugin_dirs=(PLUGINS / "gmail_digest",),
        embedder="hashing",
    )
    with LoopbackTokenServer(accounts) as server, Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="admin")
        identities = opened.governance.identities  # type: ignore[union-attr]
        assert identities is not None
        identities.providers.register(OAuth2Provider("google", server.url, "c"))
        asyncio.run(
            connect(identities, "bob", "google", scopes=["gmail.readonly"], refresh_token="rt-bob")
        )
        yield opened


def test_the_seed_gmail_digest_schedules_and_runs(yard: Yard) -> None:
    feeds = yard.feeds
    row = feeds.add(
        owner="bob",
        roles=("clerk",),
        plugin_id="gmail_digest",
        params={"messages": MESSAGES},
        interval_s=60,
    )
    assert (row.operation, row.params["op"]) == ("execute", "digest")
    first = asyncio.run(feeds.run(row.id))
    assert (first.status, first.next_cursor) == ("success", "m2")
    stored = feeds.get(row.id)
    assert stored.next_cursor == "m2" and stored.last_result["data"]["count"] == 2
    # the next run starts from the watermark of its source: nothing new to ingest
    second = asyncio.run(feeds.run(row.id))
    assert second.status == "success"
    assert feeds.get(row.id).last_result["data"]["count"] == 0
    assert len(yard.knowledge.repository.objects("mail")) == 2


@pytest.mark.parametrize(
    ("operation", "params"),
    [("send", {}), ("execute", {"op": "send"}), (None, {"op": "send"}), ("digest", {"op": "send"})],
)
def test_ops_outside_allowed_feed_ops_are_refused(
    yard: Yard, operation: str | None, params: dict[str, str]
) -> None:
    with pytest.raises(GovernanceError) as caught:
        yard.feeds.add(
            owner="bob", plugin_id="gmail_digest", operation=operation, params=params, interval_s=60
        )
    assert caught.value.code == "invalid_feed_op"


def test_operation_execute_with_the_op_in_params_is_accepted(yard: Yard) -> None:
    row = yard.feeds.add(
        owner="bob",
        plugin_id="gmail_digest",
        operation="execute",
        params={"op": "digest"},
        interval_s=60,
    )
    assert (row.operation, row.params) == ("execute", {"op": "digest"})


def test_op_style_without_allowed_ops_takes_any_op() -> None:
    op = Operation(id="execute", parameters={"type": "object", "properties": {"op": {}}})
    plain = PluginDescriptor(id="p", name="p", operations=(op,))
    assert feed_call(plain, "sync", {}).params == {"op": "sync"}
    assert feed_call(plain, None, {}).params == {}
