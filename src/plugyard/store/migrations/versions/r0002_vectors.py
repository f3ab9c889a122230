"""The vectors table: one embedding per discovery index entry.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

An entry is a plugin (``doc_id`` = the plugin id) or one of its operations
(``plugin_id/operation_id``). A vector is reused only while both its ``content_hash``
and its ``embedder`` identity match, so the columns say which text and which model made
it. ``vector`` holds little-endian float32 bytes (BLOB on SQLite, bytea on PostgreSQL).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "vectors",
        sa.Column("doc_id", sa.String(401), primary_key=True),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("embedder", sa.String(500), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_vectors_plugin_id", "vectors", ["plugin_id"])


def downgrade() -> None:
    op.drop_index("ix_vectors_plugin_id", table_name="vectors")
    op.drop_table("vectors")
