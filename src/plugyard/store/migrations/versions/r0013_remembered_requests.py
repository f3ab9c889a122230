"""Remembered requests: what discovery learned from accepted calls and feedback.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24

One row per (subject, tool, request): the request a subject accepted a tool for, with
its embedding cached under the embedder that made it. Rows go with their plugin.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "remembered_requests",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("doc_id", sa.String(401), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("embedder", sa.String(500), nullable=True),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.UniqueConstraint("subject", "doc_id", "digest", name="uq_remembered_requests_once"),
    )
    op.create_index("ix_remembered_requests_plugin_id", "remembered_requests", ["plugin_id"])
    op.create_index("ix_remembered_requests_doc_id", "remembered_requests", ["doc_id"])


def downgrade() -> None:
    op.drop_index("ix_remembered_requests_doc_id", "remembered_requests")
    op.drop_index("ix_remembered_requests_plugin_id", "remembered_requests")
    op.drop_table("remembered_requests")
