"""Everything the browser loads comes from plugyard, under a strict policy."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from plugyard.console.assets import VENDOR


def test_console_pages_carry_a_strict_policy(admin: TestClient) -> None:
    policy = admin.get("/").headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy


def test_pages_load_nothing_from_elsewhere(admin: TestClient) -> None:
    for url in ("/", "/console/plugins/hinted", "/console/pipelines/editor", "/docs", "/redoc"):
        html = admin.get(url).text
        sources = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert all(s.startswith(("/", "#")) for s in sources), (url, sources)
        assert "<script>" not in html and "<style" not in html, url


def test_the_docs_pages_use_the_local_swagger_and_redoc(app: object) -> None:
    client = TestClient(app)  # type: ignore[arg-type]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/console/static/vendor/swagger-ui-bundle.js" in docs.text
    assert "script-src 'self'" in docs.headers["content-security-policy"]
    assert "/console/static/vendor/redoc.standalone.js" in client.get("/redoc").text
    for name in VENDOR:
        reply = client.get(f"/console/static/vendor/{name}")
        assert reply.status_code == 200 and len(reply.content) > 10_000, name


def test_only_named_files_are_served(app: object) -> None:
    client = TestClient(app)  # type: ignore[arg-type]
    assert client.get("/console/static/console.js").status_code == 200
    assert client.get("/console/static/../web.py").status_code == 404
    assert client.get("/console/static/vendor/..%2F..%2Fcore.py").status_code == 404
    assert client.get("/console/static/nothing.css").status_code == 404
