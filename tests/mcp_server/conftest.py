"""A governed yard with the bundled plugins and a policy: bob may use the calculator only
with approval, alice may do anything and approve, eve may do nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.yard import Settings, Yard

POLICY = """
subjects: {bob: {roles: [clerk]}, alice: {roles: [boss]}, eve: {roles: [guest]}}
grants:
  - {to: "role:clerk", plugin: calculator, effect: allow_with_approval}
  - {to: "role:boss", plugin: "*", verb: approve, effect: allow}
  - {to: "role:boss", plugin: "*", effect: allow}
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
