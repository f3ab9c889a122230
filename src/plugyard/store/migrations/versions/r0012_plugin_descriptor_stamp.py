"""Which descriptor model wrote each plugin row.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24

``plugins.stamp`` names the canonical descriptor model (its schema's digest) that
validated the row's descriptor when it was written. A start reads rows written under
the model it runs without validating them again until a descriptor is first used; a
row without a stamp, or with another model's, is validated as it is read.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("plugins", sa.Column("stamp", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("plugins") as batch:
        batch.drop_column("stamp")
