"""Who saved a stored pipeline, and which stored document a run ran.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27

A stored pipeline runs with the rights of whoever runs it, so a run must show whose
document it was: ``pipelines.saved_by`` is the subject that stored the current version
(``NULL`` for rows stored before this revision, or by the embedding application), and
``pipeline_runs.stored`` the name, saver and digest of the stored document a run ran
(``NULL`` for a document given inline). Runs are listed per subject, hence the index.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("pipelines", sa.Column("saved_by", sa.String(200), nullable=True))
    op.add_column("pipeline_runs", sa.Column("stored", _json(), nullable=True))
    op.create_index("ix_pipeline_runs_subject", "pipeline_runs", ["subject", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_pipeline_runs_subject", table_name="pipeline_runs")
    with op.batch_alter_table("pipeline_runs") as table:
        table.drop_column("stored")
    with op.batch_alter_table("pipelines") as table:
        table.drop_column("saved_by")
