"""The tables as the code reads and writes them.

Migrations (``migrations/versions``) create these tables; this module describes their
current shape for queries. The two must agree: a test compares them on every backend,
so a new table is added in both places (see docs/registry.md, "Migrations").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

metadata = MetaData()

#: JSON on SQLite, JSONB (indexable, compact) on PostgreSQL.
JsonDocument: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend.

    SQLite has no timezone type and hands back naive values; they were written as UTC,
    so they are read as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: the store keeps UTC timestamps only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


plugins = Table(
    "plugins",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("family", String(20), nullable=False),
    Column("version", String(100), nullable=True),
    Column("source", String(20), nullable=False),
    Column("trust", String(20), nullable=False),
    Column("location", Text, nullable=True),
    Column("manifest_path", Text, nullable=True),
    Column("dialect", String(20), nullable=True),
    Column("descriptor", JsonDocument, nullable=False),
    Column("content_hash", String(64), nullable=False),
    # The descriptor model that validated ``descriptor`` (migration 0012).
    Column("stamp", String(64), nullable=True),
    Column("available", Boolean, nullable=False),
    Column("unavailable_reason", Text, nullable=True),
    Column("registered_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_plugins_family", "family"),
    Index("ix_plugins_source", "source"),
)

#: One embedding per discovery index entry (a plugin, or ``plugin_id/operation_id``),
#: reused while its content hash and embedder identity both match.
vectors = Table(
    "vectors",
    metadata,
    Column("doc_id", String(401), primary_key=True),
    Column("plugin_id", String(200), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("embedder", String(500), nullable=False),
    Column("dim", Integer, nullable=False),
    Column("vector", LargeBinary, nullable=False),  # little-endian float32
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_vectors_plugin_id", "plugin_id"),
)

# --- governance (docs/governance.md) ---------------------------------------------------
# Times are UTC epoch seconds (Float): compared on the hot path, never shown raw. The
# audit log keeps ISO-8601 strings instead, because they are part of what it hashes.

#: The policy documents loaded, newest last; the newest is in force.
policies = Table(
    "policies",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("version", String(64), nullable=False),
    Column("document", JsonDocument, nullable=False),
    Column("source", Text, nullable=True),
    Column("loaded_by", String(200), nullable=True),
    Column("loaded_at", Float, nullable=False),
)

#: Requests waiting for (or past) a human decision. Only the receipt's hash is kept.
approvals = Table(
    "approvals",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("receipt_hash", String(64), nullable=False, unique=True),
    Column("request_digest", String(64), nullable=False),
    Column("subject", String(200), nullable=True),
    Column("plugin_id", String(200), nullable=False),
    Column("operation", String(200), nullable=False),
    Column("preview", JsonDocument, nullable=False),
    Column("state", String(16), nullable=False),
    Column("policy_version", String(64), nullable=True),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("decided_by", String(200), nullable=True),
    Column("decided_at", Float, nullable=True),
    Column("note", Text, nullable=True),
    Column("used_at", Float, nullable=True),
    Index("ix_approvals_state", "state"),
)

#: One row per idempotency key (``key`` is the SHA-256 of subject and key).
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("request_digest", String(64), nullable=False),
    Column("subject", String(200), nullable=True),
    Column("plugin_id", String(200), nullable=False),
    Column("operation", String(200), nullable=False),
    Column("state", String(16), nullable=False),
    Column("result", JsonDocument, nullable=True),
    Column("request_id", String(64), nullable=True),
    Column("claimed_at", Float, nullable=False),
    Column("completed_at", Float, nullable=True),
)

#: The append-only, hash-chained audit log.
audit_events = Table(
    "audit_events",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("recorded_at", String(32), nullable=False),
    Column("started_at", String(32), nullable=True),
    Column("request_id", String(64), nullable=True),
    Column("subject", String(200), nullable=True),
    Column("plugin_id", String(200), nullable=True),
    Column("operation", String(200), nullable=True),
    Column("params_hash", String(64), nullable=True),
    Column("decision", String(32), nullable=True),
    Column("approver", String(200), nullable=True),
    Column("policy_version", String(64), nullable=True),
    Column("status", String(32), nullable=False),
    Column("error_code", String(64), nullable=True),
    Column("duration_ms", Float, nullable=True),
    Column("detail", JsonDocument, nullable=True),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
)

#: Encrypted secrets; ``owner`` is "" for system secrets.
secrets = Table(
    "secrets",
    metadata,
    Column("scope", String(16), primary_key=True),
    Column("owner", String(200), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("nonce", LargeBinary, nullable=False),
    Column("ciphertext", LargeBinary, nullable=False),
    Column("key_id", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

#: Scheduled operations, run as their owner.
feeds = Table(
    "feeds",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("roles", JsonDocument, nullable=False),
    Column("plugin_id", String(200), nullable=False),
    Column("operation", String(200), nullable=False),
    Column("params", JsonDocument, nullable=False),
    Column("interval_s", Float, nullable=True),
    Column("cron", String(200), nullable=True),
    Column("enabled", Boolean, nullable=False),
    Column("next_run_at", Float, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("last_run_at", Float, nullable=True),
    Column("last_status", String(32), nullable=True),
    Column("last_result", JsonDocument, nullable=True),
    Column("next_cursor", Text, nullable=True),
    Column("runs", Integer, nullable=False),
    Index("ix_feeds_next_run_at", "next_run_at"),
)

#: Small per-plugin values: ``host.storage``, ``host.cursor`` and feed watermarks.
plugin_kv = Table(
    "plugin_kv",
    metadata,
    Column("plugin_id", String(200), primary_key=True),
    Column("namespace", String(200), primary_key=True),
    Column("key", String(400), primary_key=True),
    Column("value", JsonDocument, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# --- the service's API keys (docs/server.md) -------------------------------------------

#: Who an API key stands for, with the roles policy sees (``admin`` may register).
api_subjects = Table(
    "api_subjects",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("roles", JsonDocument, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

#: One row per key ever made: the SHA-256 of the key, never the key; revoked keys stay.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(32), primary_key=True),
    Column(
        "subject",
        String(200),
        ForeignKey("api_subjects.id", name="fk_api_keys_subject"),
        nullable=False,
    ),
    Column("key_hash", String(64), nullable=False),
    Column("label", Text, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("revoked_at", UtcDateTime, nullable=True),
    Index("ix_api_keys_subject", "subject"),
)

# --- pipelines (docs/pipelines.md) -------------------------------------------------------

#: Stored pipeline documents, as written (plugyard or OLO dialect), by name.
pipelines = Table(
    "pipelines",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("description", Text, nullable=False),
    Column("dialect", String(20), nullable=False),
    Column("document", JsonDocument, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("saved_by", String(200), nullable=True),
)

#: One row per pipeline run: status, error and trace; never the context it carried.
pipeline_runs = Table(
    "pipeline_runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("pipeline", String(100), nullable=False),
    Column("status", String(20), nullable=False),
    Column("request_id", String(200), nullable=False),
    Column("subject", String(200), nullable=True),
    Column("error", JsonDocument, nullable=True),
    Column("trace", JsonDocument, nullable=False),
    Column("started_at", UtcDateTime, nullable=False),
    Column("duration_ms", Float, nullable=False),
    Column("stored", JsonDocument, nullable=True),
    Index("ix_pipeline_runs_pipeline", "pipeline", "started_at"),
    Index("ix_pipeline_runs_subject", "subject", "started_at"),
)

# --- MCP tool pins (docs/mcp.md) ---------------------------------------------------------

#: The approved (pinned) and last seen definition hash of each tool of an MCP plugin.
mcp_tool_pins = Table(
    "mcp_tool_pins",
    metadata,
    Column("plugin_id", String(200), primary_key=True),
    Column("tool", String(200), primary_key=True),
    Column("pinned_hash", String(64), nullable=False),
    Column("seen_hash", String(64), nullable=False),
    Column("approved_by", String(200), nullable=True),
    Column("updated_at", Float, nullable=False),
)

# --- Plugin folders read at start (registry.memory) ---------------------------------------

#: Per plugin folder (by manifest path): the fingerprint of its files when a start last
#: read it cleanly, and the plugins registered from it (a JSON list of [id, content hash]).
plugin_folders = Table(
    "plugin_folders",
    metadata,
    Column("manifest", Text, primary_key=True),
    Column("fingerprint", String(64), nullable=False),
    Column("plugins", Text, nullable=False),
)

# --- the knowledge base (docs/shu.md) and connected accounts -------------------------------

#: Knowledge bases: one owner plugin, the plugins it is shared with.
kbs = Table(
    "kbs",
    metadata,
    Column("kb_id", String(200), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("readers", JsonDocument, nullable=False),
    Column("created_at", Float, nullable=False),
)

#: One knowledge object per source document, unique by (kb_id, source_id).
kb_objects = Table(
    "kb_objects",
    metadata,
    Column("ko_id", String(64), primary_key=True),
    Column("kb_id", String(200), nullable=False),
    Column("source_id", String(500), nullable=False),
    Column("document_id", String(64), nullable=False),
    Column("plugin_id", String(200), nullable=False),
    Column("source_type", String(210), nullable=False),
    Column("title", Text, nullable=False),
    Column("source_url", Text, nullable=True),
    Column("content_hash", String(64), nullable=False),
    Column("attributes", JsonDocument, nullable=False),
    Column("extraction", JsonDocument, nullable=False),
    Column("word_count", Integer, nullable=False),
    Column("character_count", Integer, nullable=False),
    Column("chunk_count", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    UniqueConstraint("kb_id", "source_id", name="uq_kb_objects_source"),
)

#: The chunks of each knowledge object, with their embeddings (little-endian float32).
kb_chunks = Table(
    "kb_chunks",
    metadata,
    Column("ko_id", String(64), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("kb_id", String(200), nullable=False),
    Column("text", Text, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    Column("embedder", String(500), nullable=False),
    Index("ix_kb_chunks_kb_id", "kb_id"),
)

#: A user's account at an identity provider; token material sealed.
connected_accounts = Table(
    "connected_accounts",
    metadata,
    Column("owner", String(200), primary_key=True),
    Column("provider", String(100), primary_key=True),
    Column("target", String(320), nullable=True),
    Column("scopes", JsonDocument, nullable=False),
    Column("nonce", LargeBinary, nullable=False),
    Column("ciphertext", LargeBinary, nullable=False),
    Column("key_id", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# --- Reasoning flows (docs/reasoning.md) --------------------------------------------------

#: A reasoning session: its mounted KB, the knowledge units staged for its next turn and
#: those committed by earlier turns, its plugin preferences and its last turns.
reasoning_sessions = Table(
    "reasoning_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("subject", String(200), nullable=True),
    Column("kb_id", String(200), nullable=True),
    Column("kb_name", String(200), nullable=True),
    Column("preferences", JsonDocument, nullable=False),
    Column("staged", JsonDocument, nullable=False),
    Column("committed", JsonDocument, nullable=False),
    Column("conversation", JsonDocument, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_reasoning_sessions_subject", "subject"),
)

#: A source document uploaded to a session: its digest, size and the units it was
#: normalised into (the raw text is offered to the KB plugins, not kept).
reasoning_sources = Table(
    "reasoning_sources",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(64), nullable=False),
    Column("name", Text, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("bytes", Integer, nullable=False),
    Column("units", JsonDocument, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("ix_reasoning_sources_session_id", "session_id", "created_at"),
)

#: One DS027 planner outcome record per reasoning request, as MRP-VM spells it.
reasoning_outcomes = Table(
    "reasoning_outcomes",
    metadata,
    Column("request_id", String(64), primary_key=True),
    Column("session_id", String(64), nullable=True),
    Column("subject", String(200), nullable=True),
    Column("planner_plugin_id", String(200), nullable=False),
    Column("final_status", String(16), nullable=False),
    Column("recorded_at", UtcDateTime, nullable=False),
    Column("record", JsonDocument, nullable=False),
    Index("ix_reasoning_outcomes_recorded_at", "recorded_at"),
)

# --- The change log replicas follow (store/changes.py) ----------------------------------

#: One row per change to a followed table, written by triggers in the change's own
#: transaction (migration 0008); ``seq`` only grows.
changes = Table(
    "changes",
    metadata,
    Column("seq", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
    Column("topic", String(40), nullable=False),
    Column("subject", String(401), nullable=False),
    Column("at", Float, nullable=False),
)

# --- What the fleet holds together (store/leases.py, store/rate_buckets.py) ------------

#: A named job and the replica holding it until ``until`` (epoch seconds).
leases = Table(
    "leases",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("until", Float, nullable=False),
)

#: ``host.rate_limit`` token buckets shared by every replica.
rate_buckets = Table(
    "rate_buckets",
    metadata,
    Column("plugin_id", String(200), primary_key=True),
    Column("bucket", String(200), primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("at", Float, nullable=False),
)

# --- discovery memory (docs/discovery.md) ----------------------------------------------
#: Requests a subject accepted a tool for (``doc_id``: the plugin, or plugin/operation).
#: ``digest`` is the sha256 of the normalised request: one subject remembers one request
#: for one tool once. The vector is a cache (re-made when ``embedder`` changed).
remembered_requests = Table(
    "remembered_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("plugin_id", String(200), nullable=False),
    Column("doc_id", String(401), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("query", Text, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("embedder", String(500), nullable=True),
    Column("vector", LargeBinary, nullable=True),
    UniqueConstraint("subject", "doc_id", "digest", name="uq_remembered_requests_once"),
    Index("ix_remembered_requests_plugin_id", "plugin_id"),
    Index("ix_remembered_requests_doc_id", "doc_id"),
)
