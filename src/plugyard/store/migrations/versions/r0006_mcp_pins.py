"""Pins of MCP tools: the hash of each tool's definition as it was approved.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22

``pinned_hash`` is what an admin trusts (the first definition seen, or the one last
re-approved); ``seen_hash`` is what the server answered most recently. A tool whose two
hashes differ is disabled until it is re-approved (docs/mcp.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "mcp_tool_pins",
        sa.Column("plugin_id", sa.String(200), primary_key=True),
        sa.Column("tool", sa.String(200), primary_key=True),
        sa.Column("pinned_hash", sa.String(64), nullable=False),
        sa.Column("seen_hash", sa.String(64), nullable=False),
        sa.Column("approved_by", sa.String(200), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("mcp_tool_pins")
