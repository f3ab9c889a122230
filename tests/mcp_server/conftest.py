"""A governed yard with the bundled plugins and a policy: bob may use the calculator only
with approval, alice may do anything and approve, eve may do nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from plugyard.mcp_server.results import ERROR_META
from plugyard.yard import Settings, Yard

POLICY = """
subjects: {bob: {roles: [clerk]}, alice: {roles: [boss]}, eve: {roles: [guest]}}
grants:
  - {to: "role:clerk", plugin: calculator, effect: allow_with_approval}
  - {to: "role:boss", plugin: "*", verb: approve, effect: allow}
  - {to: "role:boss", plugin: "*", effect: allow}
  - {to: "role:clerk", plugin: model, operation: use, verb: use, effect: allow}
  - {to: "role:boss", plugin: model, operation: use, verb: use, effect: allow}
"""
ENV = {
    "PLUGYARD_AUDIT_KEY": "ab" * 32,
    "PLUGYARD_SECRETS_KEY": "cd" * 32,
    "PLUGYARD_EMBEDDER": "hashing",
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    values = {**ENV, "PLUGYARD_POLICY_FILE": str(policy),
              "PLUGYARD_DATABASE_URL": str(tmp_path / "yard.db")}  # fmt: skip
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {**os.environ, **values}


@pytest.fixture
def yard(env: dict[str, str]) -> Iterator[Yard]:
    with Yard.from_settings(Settings.from_env()) as found:
        yield found


def calls_audited(yard: Yard, subject: str) -> list[str]:
    """The statuses of the audited calls of ``subject``, oldest first."""
    return [r.status for r in yard.admin.tail(500) if r.kind == "call" and r.subject == subject]


def error_code(result: Mapping[str, Any]) -> str:
    """The code of an error result, which carries no structured content (no output schema
    describes an error) and says what failed as text."""
    assert result["isError"] is True and "structuredContent" not in result
    error = result["_meta"][ERROR_META]
    texts = [block["text"] for block in result["content"]]
    assert texts == [f"{error['code']}: {error['message']}"]
    return str(error["code"])
