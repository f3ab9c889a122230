"""An external plugin server in a subprocess on loopback: registered through the API,
called, health-flapped, killed and restarted, and still there after a restart of the
host. Health checks run round by round (``yard.health.check_once``), never on a timer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Yard
from runtimes.http.servers import Canary, PluginServer

from .conftest import registration, yard_settings


def _h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def _code(response: object) -> str:
    return str(response.json()["error"]["message"]["error"])  # type: ignore[attr-defined]


def _execute(client: TestClient, key: str, operation: str, **parameters: object) -> object:
    body = {"operation": operation, "parameters": parameters}
    return client.post("/api/v1/plugins/remote/execute", json=body, headers=_h(key))


def _rounds(yard: Yard, n: int) -> list[list[str]]:
    assert yard.health is not None
    return [asyncio.run(yard.health.check_once()) for _ in range(n)]


def test_register_call_and_reregister_idempotently(
    client: TestClient, admin_key: str, plugin_server: PluginServer
) -> None:
    body = registration(plugin_server)
    first = client.post("/api/plugins/register", json=body, headers=_h(admin_key))
    assert first.status_code == 200, first.text
    assert first.json() == {"plugin_id": "remote", "registered": True, "plugin_ids": ["remote"],
                            "changes": [{"kind": "registered", "plugin_id": "remote"}]}  # fmt: skip
    again = client.post("/api/v1/plugins/register", json=body, headers=_h(admin_key))
    assert again.json() == {"plugin_id": "remote", "registered": True, "plugin_ids": ["remote"],
                            "changes": []}  # fmt: skip
    echoed = _execute(client, admin_key, "echo", text="hi").json()  # type: ignore[attr-defined]
    assert echoed["status"] == "success" and echoed["data"]["metadata"]["echo"] == {"text": "hi"}
    added = _execute(client, admin_key, "add", a=2, b=3).json()  # type: ignore[attr-defined]
    assert added["data"]["metadata"]["sum"] == 5.0
    changed = registration(plugin_server, description="Now with a new description.")
    replaced = client.post("/api/plugins/register", json=changed, headers=_h(admin_key))
    assert replaced.json()["changes"] == [{"kind": "updated", "plugin_id": "remote"}]
    shown = client.get("/api/v1/plugins/remote", headers=_h(admin_key)).json()
    assert shown["source"] == "external" and shown["runtime"] == "http"


def test_a_hanging_or_garbage_plugin_server_gets_a_code_and_the_server_keeps_serving(
    client: TestClient, admin_key: str, plugin_server: PluginServer
) -> None:
    client.post("/api/plugins/register", json=registration(plugin_server), headers=_h(admin_key))
    hung = _execute(client, admin_key, "hang")
    assert hung.status_code == 504 and _code(hung) == "timeout"  # type: ignore[attr-defined]
    garbage = _execute(client, admin_key, "garbage")
    assert garbage.status_code == 502 and _code(garbage) == "invalid_output"  # type: ignore[attr-defined]
    assert client.get("/healthz").status_code == 200


def test_registrations_pointing_where_they_must_not_are_refused_whole(
    client: TestClient, admin_key: str, plugin_server: PluginServer, canary: Canary
) -> None:
    bad_urls = [f"http://127.1:{canary.port}", f"http://0.0.0.0:{canary.port}",
                f"http://[::ffff:127.0.0.1]:{canary.port}", f"http://2130706433:{canary.port}",
                "http://169.254.169.254", "http://10.0.0.8:80"]  # fmt: skip
    for url in bad_urls:
        body = registration(plugin_server, config={"base_url": url})
        response = client.post("/api/plugins/register", json=body, headers=_h(admin_key))
        assert response.status_code == 403 and _code(response) == "outbound_blocked", url
    sneaky = registration(
        plugin_server, "sneaky", health_check_url=f"http://localhost:{canary.port}/"
    )
    batch = [registration(plugin_server, "fine"), sneaky]
    response = client.post("/api/plugins/register", json=batch, headers=_h(admin_key))
    assert _code(response) == "outbound_blocked"
    listed = client.get("/api/v1/plugins/fine", headers=_h(admin_key))
    assert listed.status_code == 404  # nothing half-registered
    not_http = {**registration(plugin_server, "cmd"), "type": "subprocess",
                "config": {"command": "/bin/sh"}}  # fmt: skip
    refused = client.post("/api/plugins/register", json=not_http, headers=_h(admin_key))
    assert refused.status_code == 422 and _code(refused) == "manifest_invalid_value"
    assert canary.accepted == []


def test_health_flapping_kill_and_restart(
    tmp_path: Path, plugin_server: PluginServer, admin_key: str
) -> None:
    del admin_key  # the module server's store is not this one
    own = PluginServer().start()
    try:
        settings = yard_settings(tmp_path / "own.db", own)
        with Yard.from_settings(settings) as yard:
            key = yard.keys.bootstrap_admin()
            assert key is not None
            app = create_app(yard, ServerSettings(health_checks=False))
            with TestClient(app, raise_server_exceptions=False) as client:
                client.post("/api/plugins/register", json=registration(own), headers=_h(key))
                assert _rounds(yard, 2) == [[], []]
                own.stop()  # killed
                assert _rounds(yard, 2) == [[], ["remote"]]  # threshold 2
                down = _execute(client, key, "echo", text="x")
                assert down.status_code == 503 and _code(down) == "plugin_unavailable"  # type: ignore[attr-defined]
                health = client.get("/api/v1/plugins/remote/health", headers=_h(key)).json()
                assert health["available"] is False and health["health"]["state"] == "unhealthy"
                own.start()  # restarted on the same port
                assert _rounds(yard, 2) == [[], ["remote"]]
                up = _execute(client, key, "echo", text="back")
                assert up.json()["data"]["metadata"]["echo"] == {"text": "back"}  # type: ignore[attr-defined]
        with Yard.from_settings(settings) as again:  # the host restarts
            found = again.registry.find("remote")
            assert found is not None and found.source == "external" and found.available
            result = asyncio.run(again.call("remote", "add", {"a": 1, "b": 1}))
            assert result.data["metadata"]["sum"] == 2.0
            assert again.unregister_external("remote") is not None
        with Yard.from_settings(settings) as third:
            assert third.registry.find("remote") is None
    finally:
        own.stop()


def test_unregister_removes_an_external(
    client: TestClient, admin_key: str, plugin_server: PluginServer
) -> None:
    client.post("/api/plugins/register", json=registration(plugin_server), headers=_h(admin_key))
    gone = client.delete("/api/v1/plugins/remote", headers=_h(admin_key))
    assert gone.json() == {"plugin_id": "remote", "removed": True}
    again = client.delete("/api/v1/plugins/remote", headers=_h(admin_key))
    assert again.status_code == 404 and _code(again) == "plugin_not_found"


@pytest.mark.parametrize("body", [b"null", b'"text"', b"42"])
def test_a_registration_that_is_not_an_object_is_invalid(
    client: TestClient, admin_key: str, body: bytes
) -> None:
    headers = {**_h(admin_key), "Content-Type": "application/json"}
    response = client.post("/api/plugins/register", content=body, headers=headers)
    assert response.status_code == 400 and _code(response) == "invalid_request"


def test_external_registrations_are_mirrored_to_homeclaws_file_and_read_back(
    tmp_path: Path, plugin_server: PluginServer
) -> None:
    import json

    from plugyard.errors import ManifestError
    from plugyard.yard import external_plugins_path

    settings = yard_settings(tmp_path / "first.db", plugin_server)
    file = external_plugins_path(settings)
    assert file == tmp_path / "external_plugins.json"
    with Yard.from_settings(settings) as first:
        asyncio.run(first.register_external(registration(plugin_server, "remote")))
        asyncio.run(first.register_external(registration(plugin_server, "other")))
        first.unregister_external("other")
    written = json.loads(file.read_text())  # HomeClaw's form: a bare list of bodies
    assert [body.get("plugin_id", body.get("id")) for body in written] == ["remote"]
    assert written[0]["health_check_url"].endswith("/health")
    # A HomeClaw user's file, and a store that never saw it.
    fresh = replace_db(settings, tmp_path / "second.db", file)
    with Yard.from_settings(fresh) as second:
        assert second.registry.find("remote") is None
        events = asyncio.run(second.sync_external_file())
        assert [(e.kind, e.plugin_id) for e in events] == [("registered", "remote")]
        assert second.registry.require("remote").source == "external"
        assert asyncio.run(second.sync_external_file()) == ()  # nothing new the second time
    file.write_text("d" + json.dumps(written))  # a stray byte before HomeClaw's list
    with Yard.from_settings(fresh) as third, pytest.raises(ManifestError) as caught:
        asyncio.run(third.sync_external_file())
    assert caught.value.code == "manifest_syntax"
    assert caught.value.problems[0].message.startswith("line 1 column 1 (char 0)")


def replace_db(settings: object, db: Path, file: Path) -> object:
    from dataclasses import replace

    return replace(settings, database=str(db), external_plugins_file=file)  # type: ignore[type-var]


def test_a_serving_app_reads_the_file_at_start_and_follows_other_processes(
    tmp_path: Path, plugin_server: PluginServer
) -> None:
    import json
    import time

    from plugyard.registry.registry import Registry
    from plugyard.store.store import Store
    from plugyard.yard import external_plugins_path

    settings = yard_settings(tmp_path / "y.db", plugin_server)
    file = external_plugins_path(settings)
    assert file is not None
    file.write_text(json.dumps({"plugins": [registration(plugin_server, "from-file")]}))
    served = ServerSettings(health_checks=False, index_at_start=True, refresh_s=0.05)
    with Yard.from_settings(settings) as yard, TestClient(create_app(yard, served)) as client:
        key = yard.keys.bootstrap_admin()
        assert key is not None
        assert yard.registry.find("from-file") is not None  # registered before serving
        # Another process registers into the same store: this server sees it shortly.
        with Store.open(str(tmp_path / "y.db")) as other:
            outsider = yard.registry.require("from-file")
            from dataclasses import replace

            Registry.over(other).register(
                replace(outsider, descriptor=outsider.descriptor.model_copy(
                    update={"id": "late-comer"})), replace=True
            )  # fmt: skip
        deadline = time.monotonic() + 10
        while yard.registry.find("late-comer") is None:
            assert time.monotonic() < deadline, "the server never read the store again"
            client.get("/healthz")  # let the server's loop turn
        found = client.get("/api/v1/plugins/late-comer", headers=_h(key))
        assert found.status_code == 200


def test_a_registration_without_health_check_url_is_refused(
    client: TestClient, admin_key: str, plugin_server: PluginServer
) -> None:
    homeclaw = registration(plugin_server, "no-health")
    del homeclaw["health_check_url"]
    canonical = {"id": "no-health-either", "name": "N",
                 "runtime": {"kind": "http", "base_url": plugin_server.url},
                 "operations": [{"id": "echo"}]}  # fmt: skip
    for body in (homeclaw, canonical):
        refused = client.post("/api/plugins/register", json=body, headers=_h(admin_key))
        assert refused.status_code == 422 and _code(refused) == "manifest_missing_field"
    assert client.get("/api/v1/plugins/no-health", headers=_h(admin_key)).status_code == 404
