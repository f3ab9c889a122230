"""Governance: policies, approvals, idempotency keys, the audit chain, secrets, feeds and
per-plugin values.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

Times are UTC epoch seconds, except in the audit log, which keeps ISO-8601 strings
because they are part of what each event's hash covers.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "policies",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("document", _JSON, nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("loaded_by", sa.String(200), nullable=True),
        sa.Column("loaded_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "approvals",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("receipt_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("request_digest", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("operation", sa.String(200), nullable=False),
        sa.Column("preview", _JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("policy_version", sa.String(64), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("decided_at", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("used_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_approvals_state", "approvals", ["state"])
    op.create_table(
        "idempotency_keys",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("request_digest", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("operation", sa.String(200), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("result", _JSON, nullable=True),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("claimed_at", sa.Float(), nullable=False),
        sa.Column("completed_at", sa.Float(), nullable=True),
    )
    op.create_table(
        "audit_events",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("recorded_at", sa.String(32), nullable=False),
        sa.Column("started_at", sa.String(32), nullable=True),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("plugin_id", sa.String(200), nullable=True),
        sa.Column("operation", sa.String(200), nullable=True),
        sa.Column("params_hash", sa.String(64), nullable=True),
        sa.Column("decision", sa.String(32), nullable=True),
        sa.Column("approver", sa.String(200), nullable=True),
        sa.Column("policy_version", sa.String(64), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("detail", _JSON, nullable=True),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "secrets",
        sa.Column("scope", sa.String(16), primary_key=True),
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("nonce", sa.LargeBinary(), nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "feeds",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("roles", _JSON, nullable=False),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("operation", sa.String(200), nullable=False),
        sa.Column("params", _JSON, nullable=False),
        sa.Column("interval_s", sa.Float(), nullable=True),
        sa.Column("cron", sa.String(200), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("next_run_at", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("last_run_at", sa.Float(), nullable=True),
        sa.Column("last_status", sa.String(32), nullable=True),
        sa.Column("last_result", _JSON, nullable=True),
        sa.Column("next_cursor", sa.Text(), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
    )
    op.create_index("ix_feeds_next_run_at", "feeds", ["next_run_at"])
    op.create_table(
        "plugin_kv",
        sa.Column("plugin_id", sa.String(200), primary_key=True),
        sa.Column("namespace", sa.String(200), primary_key=True),
        sa.Column("key", sa.String(400), primary_key=True),
        sa.Column("value", _JSON, nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("plugin_kv")
    op.drop_index("ix_feeds_next_run_at", table_name="feeds")
    op.drop_table("feeds")
    op.drop_table("secrets")
    op.drop_table("audit_events")
    op.drop_table("idempotency_keys")
    op.drop_index("ix_approvals_state", table_name="approvals")
    op.drop_table("approvals")
    op.drop_table("policies")
