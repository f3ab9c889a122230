"""The knowledge base behind ``host.kb`` / ``host.query``, and connected accounts.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

``kbs``: one row per knowledge base, owned by one plugin, readable by those in
``readers``. ``kb_objects``: one row per source document, unique by ``(kb_id,
source_id)``. ``kb_chunks``: its chunks, each with its embedding. ``connected_accounts``:
a user's account at an identity provider, its token material sealed (AES-GCM, bound to
owner and provider).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "kbs",
        sa.Column("kb_id", sa.String(200), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("readers", _JSON, nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "kb_objects",
        sa.Column("ko_id", sa.String(64), primary_key=True),
        sa.Column("kb_id", sa.String(200), nullable=False),
        sa.Column("source_id", sa.String(500), nullable=False),
        sa.Column("document_id", sa.String(64), nullable=False),
        sa.Column("plugin_id", sa.String(200), nullable=False),
        sa.Column("source_type", sa.String(210), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source_url", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("attributes", _JSON, nullable=False),
        sa.Column("extraction", _JSON, nullable=False),
        sa.Column("word_count", sa.Integer(), nullable=False),
        sa.Column("character_count", sa.Integer(), nullable=False),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("kb_id", "source_id", name="uq_kb_objects_source"),
    )
    op.create_table(
        "kb_chunks",
        sa.Column("ko_id", sa.String(64), primary_key=True),
        sa.Column("idx", sa.Integer(), primary_key=True),
        sa.Column("kb_id", sa.String(200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("embedder", sa.String(500), nullable=False),
    )
    op.create_index("ix_kb_chunks_kb_id", "kb_chunks", ["kb_id"])
    op.create_table(
        "connected_accounts",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("provider", sa.String(100), primary_key=True),
        sa.Column("target", sa.String(320), nullable=True),
        sa.Column("scopes", _JSON, nullable=False),
        sa.Column("nonce", sa.LargeBinary(), nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("connected_accounts")
    op.drop_index("ix_kb_chunks_kb_id", table_name="kb_chunks")
    op.drop_table("kb_chunks")
    op.drop_table("kb_objects")
    op.drop_table("kbs")
