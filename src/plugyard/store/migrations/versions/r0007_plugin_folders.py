"""What the last start read from each plugin folder.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22

One row per plugin folder a start read and registered cleanly, keyed by its manifest's
path: a fingerprint of the folder's files and the plugins registered from it (a JSON
list of [id, content hash]). A
start skips a folder whose fingerprint is unchanged (registry.memory); the table is a
cache, and emptying it only makes the next start read every folder again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "plugin_folders",
        sa.Column("manifest", sa.Text(), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("plugins", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("plugin_folders")
