"""The plugins table: one row per registered plugin.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

A revision is a frozen record of one change: it spells its columns out rather than
importing ``plugyard.store.schema``, which describes only the latest shape.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "plugins",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("family", sa.String(20), nullable=False),
        sa.Column("version", sa.String(100), nullable=True),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("trust", sa.String(20), nullable=False),
        sa.Column("location", sa.Text(), nullable=True),
        sa.Column("manifest_path", sa.Text(), nullable=True),
        sa.Column("dialect", sa.String(20), nullable=True),
        sa.Column(
            "descriptor",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("available", sa.Boolean(), nullable=False),
        sa.Column("unavailable_reason", sa.Text(), nullable=True),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_plugins_family", "plugins", ["family"])
    op.create_index("ix_plugins_source", "plugins", ["source"])


def downgrade() -> None:
    op.drop_index("ix_plugins_source", table_name="plugins")
    op.drop_index("ix_plugins_family", table_name="plugins")
    op.drop_table("plugins")
