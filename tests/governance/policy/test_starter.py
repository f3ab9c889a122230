"""The starter policy as documented is the starter policy in force."""

from __future__ import annotations

import re
from pathlib import Path

from plugyard.governance.policy.document import parse_text
from plugyard.governance.policy.starter import STARTER_TEXT, starter_document

DOCS = Path(__file__).resolve().parents[3] / "docs" / "governance.md"


def test_the_documented_starter_policy_is_the_one_in_force() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Deny by default: the starter policy") :]
    block = re.search(r"```yaml policy\n(.*?)```", section, re.DOTALL)
    assert block is not None
    assert parse_text(block.group(1)) == starter_document()
    assert parse_text(STARTER_TEXT).digest() == starter_document().digest()
