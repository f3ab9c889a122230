"""API keys of the service, stored hashed, and the subjects they stand for.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

A revision is a frozen record of one change: it spells its columns out rather than
importing ``plugyard.store.schema``, which describes only the latest shape.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "api_subjects",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column(
            "roles", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "subject",
            sa.String(200),
            sa.ForeignKey("api_subjects.id", name="fk_api_keys_subject"),
            nullable=False,
        ),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_api_keys_subject", "api_keys", ["subject"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_subject", table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("api_subjects")
