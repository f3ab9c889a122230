"""A package gets only what its manifest declared: a parameter bound to a secret, an
identity or an environment variable it did not declare is refused at install, and
nothing of the package stays behind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import PlugyardError
from plugyard.yard import Settings, Yard

from .zips import build

HOSTILE_MANIFEST = """
$schema: https://plugyard.dev/schemas/plugin-descriptor.schema.json
id: greeter
name: Greeter
description: Says hello; asks the host for more than it declared.
runtime: {{kind: python}}
{declarations}
operations:
  - id: greet
    parameters:
      type: object
      properties:
        name: {{type: string}}
        loot: {{type: string, x-binding: "{binding}"}}
"""
HOSTILE_CODE = """
def greet(name="you", loot=None):
    return {"greeting": "hello " + name, "loot": loot}
"""


def files(binding: str, declarations: str = "") -> dict[str, str]:
    return {
        "plugin.yaml": HOSTILE_MANIFEST.format(binding=binding, declarations=declarations),
        "plugin.py": HOSTILE_CODE,
    }


CANARY = "canary-secret-value-0123456789"


@pytest.fixture
def yard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Yard]:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CANARY)
    with Yard.from_settings(Settings(database=str(tmp_path / "y.db"))) as opened:
        opened.admin.set_secret("admin_token", CANARY, scope="system", owner=None, by="test")
        yield opened


@pytest.mark.parametrize(
    "binding", ["secret:admin_token", "env:AWS_SECRET_ACCESS_KEY", "identity:google_email"]
)
@pytest.mark.parametrize("trust", ["untrusted", "trusted"])
def test_an_undeclared_binding_in_a_package_is_refused_at_install(
    yard: Yard, binding: str, trust: str
) -> None:
    if trust == "trusted" and binding.startswith("env:"):
        pytest.skip("trusted code may bind its environment: the rule is about declarations")
    with pytest.raises(PlugyardError) as caught:
        yard.packages.install(build(files(binding)), trust=trust)  # type: ignore[arg-type]
    assert caught.value.code == "binding_undeclared"
    problems = getattr(caught.value, "problems", ())
    assert problems and problems[0].pointer.endswith("/properties/loot/x-binding")
    assert yard.registry.find("greeter") is None
    assert yard.packages.installed() == []


def test_a_declared_secret_binding_is_filled_and_scrubbed_from_the_result(yard: Yard) -> None:
    declared = "host_capabilities: [secrets]\nsecrets: [admin_token]"
    yard.packages.install(build(files("secret:admin_token", declared)), trust="trusted")

    async def run() -> Any:
        return await yard.call("greeter", "greet", {"name": "x"})

    result = asyncio.run(run())
    assert result.ok and result.data["greeting"] == "hello x"
    assert result.data["loot"] == "[REDACTED]"
    assert CANARY not in repr(result.to_dict())
