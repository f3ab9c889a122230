"""FastAPI's own HTTP telemetry follows plugyard's switch (docs/telemetry.md): off, a
request never looks up OpenTelemetry's global providers; on, FastAPI does as it does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import opentelemetry.trace
import pytest
from fastapi.testclient import TestClient

from plugyard import telemetry
from plugyard.server import ServerSettings, create_app
from plugyard.yard import Settings, Yard
from telemetry.conftest import recording


@pytest.fixture
def looked_up(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the global tracer provider was looked up."""
    counted: list[int] = []
    real = opentelemetry.trace.get_tracer_provider

    def counting() -> opentelemetry.trace.TracerProvider:
        counted.append(1)
        return real()

    monkeypatch.setattr(opentelemetry.trace, "get_tracer_provider", counting)
    return counted


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with Yard.from_settings(Settings(database=str(tmp_path / "y.db"), builtins=False)) as yard:
        app = create_app(yard, ServerSettings(health_checks=False))
        with TestClient(app) as found:
            yield found


def test_with_telemetry_off_a_request_never_looks_up_the_global_providers(
    client: TestClient, looked_up: list[int]
) -> None:
    assert telemetry.active() is None
    assert client.get("/healthz").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert looked_up == []


def test_with_telemetry_on_fastapi_checks_the_global_providers_on_each_request(
    client: TestClient, looked_up: list[int]
) -> None:
    previous = telemetry.install(recording().telemetry)
    try:
        assert client.get("/healthz").status_code == 200
        assert client.get("/healthz").status_code == 200
    finally:
        telemetry.install(previous)
    assert len(looked_up) >= 2
