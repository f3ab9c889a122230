"""Secrets: the vault (sealed at rest, bound to scope and owner), the key material it
and the audit chain use, and redaction."""
