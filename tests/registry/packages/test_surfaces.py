"""The package surfaces: ``plugyard packages install|list|remove`` and the admin-only REST
routes under ``/api/v1/packages`` (raw zip and multipart uploads)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from plugyard.cli.main import cli
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard

from .zips import build, shu_files, with_entry

NET = {"greeter_pkg/net.py": "import requests\n"}


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


def test_cli_installs_lists_and_removes(tmp_path: Path) -> None:
    archive = tmp_path / "greeter.zip"
    archive.write_bytes(build(shu_files()))
    db = tmp_path / "y.db"
    code, out = run(db, "packages", "install", str(archive), "--json")
    assert code == 0, out
    installed = json.loads(out[out.index("{") :])
    assert (installed["name"], installed["trust"], installed["registered"]) == (
        "greeter", "untrusted", ["greeter"],
    )  # fmt: skip
    code, out = run(db, "packages", "list", "--json")
    assert [(p["name"], p["trust"]) for p in json.loads(out)] == [("greeter", "untrusted")]
    code, out = run(db, "packages", "list")
    assert out.split()[:2] == ["greeter", "untrusted"]
    code, out = run(db, "packages", "remove", "greeter", "--json")
    assert (code, json.loads(out)) == (0, {"name": "greeter", "removed": ["greeter"]})
    assert not (tmp_path / "packages" / "greeter").exists()


def test_cli_trust_and_override_are_flags(tmp_path: Path) -> None:
    archive = tmp_path / "net.zip"
    archive.write_bytes(build(shu_files(**NET)))
    db = tmp_path / "y.db"
    code, out = run(db, "packages", "install", str(archive), "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "package_refused"
    assert json.loads(out)["error"]["details"]["findings"][0]["rule"] == "http_client"
    code, out = run(db, "packages", "install", str(archive), "--json", "--allow-findings")
    assert code == 0, out
    code, out = run(db, "packages", "install", str(archive), "--json", "--trust")
    assert code == 0, out
    assert "warning: greeter_pkg/net.py:1: http_client: requests" in out
    assert json.loads(out[out.index("{") :])["trust"] == "trusted"


def test_cli_reports_an_unsafe_zip_and_a_missing_package(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "bad.zip"
    archive.write_bytes(with_entry(zipfile.ZipInfo("../x.py")))
    code, out = run(tmp_path / "y.db", "packages", "install", str(archive), "--json")
    error = json.loads(out)["error"]
    assert (code, error["code"], error["details"]["reason"]) == (
        1,
        "package_invalid",
        "unsafe_path",
    )
    code, out = run(tmp_path / "y.db", "packages", "remove", "nothing", "--json")
    assert (code, json.loads(out)["error"]["code"]) == (1, "package_not_found")


# ------------------------------------------------------------------------------- REST


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    with Yard.from_settings(Settings(database=str(tmp_path / "y.db"))) as opened:
        yield opened


@pytest.fixture
def client(yard: Yard) -> Iterator[TestClient]:
    app = create_app(yard, ServerSettings(health_checks=False, max_body_bytes=256 * 1024))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


@pytest.fixture
def admin(yard: Yard) -> dict[str, str]:
    key = yard.keys.bootstrap_admin()
    assert key is not None
    return {"X-API-Key": key}


def error_code(response: object) -> str:
    body = response.json()  # type: ignore[attr-defined]
    return str(body["error"]["message"]["error"])


def test_an_admin_uploads_a_raw_zip(client: TestClient, admin: dict[str, str], yard: Yard) -> None:
    response = client.post(
        "/api/v1/packages",
        content=build(shu_files()),
        headers=admin | {"Content-Type": "application/zip"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["registered"] == ["greeter"]
    assert response.json()["trust"] == "untrusted"
    assert yard.registry.require("greeter").trust == "untrusted"
    listed = client.get("/api/v1/packages", headers=admin).json()["packages"]
    assert [p["name"] for p in listed] == ["greeter"]
    removed = client.delete("/api/v1/packages/greeter", headers=admin)
    assert removed.json() == {"name": "greeter", "removed": ["greeter"]}
    assert client.delete("/api/v1/packages/greeter", headers=admin).status_code == 404


def test_an_admin_uploads_multipart_and_sets_trust(
    client: TestClient, admin: dict[str, str], yard: Yard
) -> None:
    files = {"package": ("greeter.zip", build(shu_files()), "application/zip")}
    response = client.post("/api/v1/packages?trust=true", files=files, headers=admin)
    assert response.status_code == 201, response.text
    assert yard.registry.require("greeter").trust == "trusted"


def test_only_admins_may_upload(client: TestClient, yard: Yard) -> None:
    reader = {"X-API-Key": yard.keys.create("reader", ("reader",))[1]}
    body = build(shu_files())
    raw = {"Content-Type": "application/zip"}
    assert client.post("/api/v1/packages", content=body, headers=raw).status_code == 401
    response = client.post("/api/v1/packages", content=body, headers=reader | raw)
    assert (response.status_code, error_code(response)) == (403, "permission_denied")
    assert yard.packages.installed() == []


@pytest.mark.parametrize(
    ("body", "kind", "status", "code"),
    [
        (build(shu_files(**NET)), "application/zip", 422, "package_refused"),
        (b"not a zip", "application/zip", 422, "package_invalid"),
        (b"{}", "application/json", 415, "unsupported_media_type"),
        (b"", "application/zip", 400, "invalid_request"),
        (b"\0" * (300 * 1024), "application/zip", 413, "request_too_large"),
    ],
)
def test_refused_uploads_answer_their_code(
    client: TestClient, admin: dict[str, str], body: bytes, kind: str, status: int, code: str
) -> None:
    response = client.post("/api/v1/packages", content=body, headers=admin | {"Content-Type": kind})
    assert (response.status_code, error_code(response)) == (status, code)


def test_a_refusal_carries_its_reason_and_findings(
    client: TestClient, admin: dict[str, str]
) -> None:
    raw = admin | {"Content-Type": "application/zip"}
    response = client.post("/api/v1/packages", content=build(shu_files(**NET)), headers=raw)
    assert response.json()["error"]["details"]["findings"][0]["name"] == "requests"
    response = client.post("/api/v1/packages", content=b"nope", headers=raw)
    assert response.json()["error"]["details"] == {"reason": "not_a_zip"}
    forced = client.post(
        "/api/v1/packages?allow_findings=true", content=build(shu_files(**NET)), headers=raw
    )
    assert forced.status_code == 201
    assert forced.json()["guard_overridden"] is True
