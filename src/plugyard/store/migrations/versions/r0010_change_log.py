"""The change log: one row per change another replica must hear of.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24

Triggers write the row in the same transaction as the change itself, so no writer (a
server, the CLI, an older tool) can forget to, and a change that rolls back leaves no
row. ``seq`` only grows; a replica applies rows in order and, after losing its
connection, reads everything after the last ``seq`` it applied (store/changes.py).

On PostgreSQL the trigger also sends ``NOTIFY plugyard_changes, '<seq>'`` and takes a
transaction-scoped advisory lock first: sequence values are handed out when a row is
inserted, not when it commits, so without the lock a reader could see 7 committed while
6 is still in flight and never go back for it. With it, change rows commit in ``seq``
order. Only writes to the followed tables queue on that lock; calls do not.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

#: table → the expression naming the changed row (NEW/OLD filled in per event).
FOLLOWED = {
    "plugins": "{row}.id",
    "api_keys": "{row}.id",
    "api_subjects": "{row}.id",
    "policies": "CAST({row}.seq AS TEXT)",
    "mcp_tool_pins": "{row}.plugin_id",
}
_LOCK_KEY = 0x706C7567636867  # arbitrary, fixed; distinct from the migration lock


def upgrade() -> None:
    op.create_table(
        "changes",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("topic", sa.String(40), nullable=False),
        sa.Column("subject", sa.String(401), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
    )
    if op.get_context().dialect.name == "postgresql":
        _postgresql_triggers()
    else:
        _sqlite_triggers()


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    for table in FOLLOWED:
        for event in ("insert", "update", "delete"):
            name = f"plugyard_change_{table}_{event}"
            if dialect == "postgresql":
                op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            else:
                op.execute(f"DROP TRIGGER IF EXISTS {name}")
    if dialect == "postgresql":
        for table in FOLLOWED:
            op.execute(f"DROP FUNCTION IF EXISTS plugyard_change_{table}()")
    op.drop_table("changes")


def _postgresql_triggers() -> None:
    for table, subject in FOLLOWED.items():
        new, old = subject.format(row="NEW"), subject.format(row="OLD")
        op.execute(f"""
CREATE FUNCTION plugyard_change_{table}() RETURNS trigger AS $$
DECLARE
  change_seq bigint;
  changed text;
BEGIN
  PERFORM pg_advisory_xact_lock({_LOCK_KEY});
  IF TG_OP = 'DELETE' THEN changed := {old}; ELSE changed := {new}; END IF;
  INSERT INTO changes (topic, subject, at)
    VALUES ('{table}', changed, extract(epoch from clock_timestamp()))
    RETURNING seq INTO change_seq;
  PERFORM pg_notify('plugyard_changes', change_seq::text);
  RETURN NULL;
END $$ LANGUAGE plpgsql""")
        op.execute(
            f"CREATE TRIGGER plugyard_change_{table}_insert AFTER INSERT OR UPDATE OR DELETE"
            f" ON {table} FOR EACH ROW EXECUTE FUNCTION plugyard_change_{table}()"
        )


def _sqlite_triggers() -> None:
    # SQLite serialises writers (BEGIN IMMEDIATE), so rows commit in seq order already.
    for table, subject in FOLLOWED.items():
        for event, row in (("insert", "NEW"), ("update", "NEW"), ("delete", "OLD")):
            op.execute(
                f"CREATE TRIGGER plugyard_change_{table}_{event} AFTER {event.upper()}"
                f" ON {table} BEGIN INSERT INTO changes (topic, subject, at) VALUES"
                f" ('{table}', {subject.format(row=row)},"
                " (julianday('now') - 2440587.5) * 86400.0); END"
            )
