"""Leases and rate-limit buckets held by the fleet rather than by one process.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24

``leases``: a named job (a feed tick, say) and the replica holding it until ``until``
(epoch seconds); another replica takes it only once it lapsed, so a job runs once per
fleet and a replica that died frees it by itself. ``rate_buckets``: the token bucket of
``host.rate_limit`` per plugin and bucket, so a limit of N admits N in the fleet.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("until", sa.Float(), nullable=False),
    )
    op.create_table(
        "rate_buckets",
        sa.Column("plugin_id", sa.String(200), primary_key=True),
        sa.Column("bucket", sa.String(200), primary_key=True),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rate_buckets")
    op.drop_table("leases")
