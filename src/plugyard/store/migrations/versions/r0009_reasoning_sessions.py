"""Reasoning sessions, their source documents and the planner outcome records.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29

A session keeps its mounted KB identity, the knowledge units staged for its next turn
and those earlier turns committed, its plugin preferences and its last turns. A source
keeps its digest, size and units, never its text. An outcome is the DS027 planner
outcome record of one request, kept as MRP-VM spells it.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "reasoning_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("kb_id", sa.String(200), nullable=True),
        sa.Column("kb_name", sa.String(200), nullable=True),
        sa.Column("preferences", _json(), nullable=False),
        sa.Column("staged", _json(), nullable=False),
        sa.Column("committed", _json(), nullable=False),
        sa.Column("conversation", _json(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_reasoning_sessions_subject", "reasoning_sessions", ["subject"])
    op.create_table(
        "reasoning_sources",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("units", _json(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_reasoning_sources_session_id", "reasoning_sources", ["session_id", "created_at"]
    )
    op.create_table(
        "reasoning_outcomes",
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("planner_plugin_id", sa.String(200), nullable=False),
        sa.Column("final_status", sa.String(16), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("record", _json(), nullable=False),
    )
    op.create_index("ix_reasoning_outcomes_recorded_at", "reasoning_outcomes", ["recorded_at"])


def downgrade() -> None:
    op.drop_index("ix_reasoning_outcomes_recorded_at", table_name="reasoning_outcomes")
    op.drop_table("reasoning_outcomes")
    op.drop_index("ix_reasoning_sources_session_id", table_name="reasoning_sources")
    op.drop_table("reasoning_sources")
    op.drop_index("ix_reasoning_sessions_subject", table_name="reasoning_sessions")
    op.drop_table("reasoning_sessions")
