"""The policy in force until an operator loads one: deny by default (Shu, "RBAC for
Actions"), with two roles an operator can hand out at once.

- ``admin`` (the role of the first key ``plugyard serve`` prints) may call and approve
  everything;
- ``reader`` may call every operation whose manifest declares ``effect: read``, and use
  the yard's chat model (ask, chat, reasoning with model-backed plugins);
- anyone else — a key with no role, or with a role this document does not know — may
  call nothing. Write and destructive operations need a grant in a loaded policy.

An operation that declares ``requires_approval`` still waits for an approval, even for
an admin. ``plugyard policy show`` prints this document while it is in force.
"""

from __future__ import annotations

from plugyard.governance.policy.document import PolicyDocument, parse_text

STARTER_TEXT = """\
version: 1
roles:
  admin: {}
  reader: {}
grants:
  - {to: "role:admin", plugin: "*", operation: "*", verb: "*", effect: allow}
  - {to: "role:reader", plugin: "*", operation: "*", operation_effect: read, effect: allow}
  - {to: "role:reader", plugin: model, operation: use, verb: use, effect: allow}
"""


def starter_document() -> PolicyDocument:
    return parse_text(STARTER_TEXT)
