"""Governance (DESIGN.md §7): policy, approvals, idempotency, secrets, identities,
bindings, audit and the host object's services — each concept with its rule and its
step on the call path."""
