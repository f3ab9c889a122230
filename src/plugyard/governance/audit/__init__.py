"""Audit: the event every call leaves, and the hash chain that makes the log
tamper-evident."""
