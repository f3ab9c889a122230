"""Stored pipeline documents and the runs' traces.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22

A run keeps its status, error and trace (statuses, timings and output sizes of every
node) but never its context: the data a pipeline saw goes back to the caller only.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "pipelines",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("dialect", sa.String(20), nullable=False),
        sa.Column("document", _json(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "pipeline_runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("pipeline", sa.String(100), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("request_id", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("error", _json(), nullable=True),
        sa.Column("trace", _json(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
    )
    op.create_index("ix_pipeline_runs_pipeline", "pipeline_runs", ["pipeline", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_pipeline_runs_pipeline", table_name="pipeline_runs")
    op.drop_table("pipeline_runs")
    op.drop_table("pipelines")
