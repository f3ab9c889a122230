"""What the Shu contract adds to the service: the feed scheduler runs by itself while it
serves (no run-due call), and callers connect their own accounts (tokens never return)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi.testclient import TestClient

from plugyard.governance.identities.loopback import LoopbackTokenServer
from plugyard.governance.identities.oauth2 import OAuth2Provider
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

PLUGINS = Path(__file__).resolve().parents[1] / "shu_plugins"
POLICY = """
subjects: {bob: {roles: [clerk]}}
grants: [{to: "role:clerk", plugin: "*", effect: allow}]
"""


def test_the_server_runs_due_feeds_by_itself(tmp_path: Path) -> None:
    settings = Settings(
        database=str(tmp_path / "y.db"),
        builtins=False,
        plugin_dirs=(PLUGINS / "mail_actions",),
        embedder="hashing",
    )
    with Yard.from_settings(settings) as yard:
        yard.admin.load_policy(POLICY, by="admin")
        row = yard.feeds.add(
            owner="bob",
            roles=("clerk",),
            plugin_id="mail_actions",
            operation="execute",
            interval_s=3600,
        )
        app = create_app(yard, ServerSettings(health_checks=False, feeds_s=3600))
        with TestClient(app) as client:
            client.portal.call(app.state.feed_loop.wait_passes, 1)
        ran = yard.feeds.get(row.id)
        assert ran.runs == 1 and ran.last_status == "success"


def test_a_caller_connects_lists_and_removes_its_account(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    accounts = {"rt-1": (("mail",), "bob@example.com")}
    with (
        LoopbackTokenServer(accounts, codes={"code-1": "rt-1"}) as tokens,
        Yard.from_settings(settings) as yard,
    ):
        identities = yard.governance.identities  # type: ignore[union-attr]
        assert identities is not None
        identities.providers.register(OAuth2Provider("google", tokens.url, "c"))
        _, key = yard.keys.create("bob", ("clerk",))
        headers = {"X-API-Key": key}
        with TestClient(create_app(yard, ServerSettings(health_checks=False))) as client:
            made = client.put("/api/v1/accounts/google", json={"code": "code-1"}, headers=headers)
            assert made.status_code == 200, made.text
            assert made.json()["target"] == "bob@example.com"
            listed = client.get("/api/v1/accounts", headers=headers).json()
            assert [a["provider"] for a in listed] == ["google"]
            assert "rt-1" not in client.get("/api/v1/accounts", headers=headers).text
            unknown = client.put(
                "/api/v1/accounts/github", json={"refresh_token": "x"}, headers=headers
            )
            assert unknown.json()["error"]["message"]["error"] == "auth_provider_unknown"
            assert client.delete("/api/v1/accounts/google", headers=headers).status_code == 200
            gone = client.delete("/api/v1/accounts/google", headers=headers)
            assert gone.json()["error"]["message"]["error"] == "account_not_found"
        material = asyncio.run(asyncio.to_thread(identities.accounts.list, "bob"))
        assert material == []
