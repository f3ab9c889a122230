"""The tables as the code reads and writes them.

Migrations (``migrations/versions``) create these tables; this module describes their
current shape for queries. The two must agree: a test compares them on every backend,
so a new table is added in both places (see docs/registry.md, "Migrations").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Column, DateTime, Index, MetaData, String, Table, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

metadata = MetaData()

#: JSON on SQLite, JSONB (indexable, compact) on PostgreSQL.
JsonDocument: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend.

    SQLite has no timezone type and hands back naive values; they were written as UTC,
    so they are read as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: the store keeps UTC timestamps only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


plugins = Table(
    "plugins",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("family", String(20), nullable=False),
    Column("version", String(100), nullable=True),
    Column("source", String(20), nullable=False),
    Column("trust", String(20), nullable=False),
    Column("location", Text, nullable=True),
    Column("manifest_path", Text, nullable=True),
    Column("dialect", String(20), nullable=True),
    Column("descriptor", JsonDocument, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("available", Boolean, nullable=False),
    Column("unavailable_reason", Text, nullable=True),
    Column("registered_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_plugins_family", "family"),
    Index("ix_plugins_source", "source"),
)
