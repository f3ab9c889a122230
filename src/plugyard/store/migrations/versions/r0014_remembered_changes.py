"""Remembered requests join the change log, so replicas learn together.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24

A request one replica learns, takes back or purges must reach the memory of the others
(discovery/learning.py). Each inserted or deleted ``remembered_requests`` row logs its
tool (``doc_id``); a follower re-reads that tool's rows. Updates are not logged: they
only rewrite a row's cached vector, which changes nothing another replica keeps.

The triggers are those of 0010 (same advisory lock, so change rows commit in ``seq``
order on PostgreSQL; same NOTIFY).
"""

from __future__ import annotations

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None

_TABLE = "remembered_requests"
_LOCK_KEY = 0x706C7567636867  # the change log's (0010)


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(f"""
CREATE FUNCTION plugyard_change_{_TABLE}() RETURNS trigger AS $$
DECLARE
  change_seq bigint;
  changed text;
BEGIN
  PERFORM pg_advisory_xact_lock({_LOCK_KEY});
  IF TG_OP = 'DELETE' THEN changed := OLD.doc_id; ELSE changed := NEW.doc_id; END IF;
  INSERT INTO changes (topic, subject, at)
    VALUES ('{_TABLE}', changed, extract(epoch from clock_timestamp()))
    RETURNING seq INTO change_seq;
  PERFORM pg_notify('plugyard_changes', change_seq::text);
  RETURN NULL;
END $$ LANGUAGE plpgsql""")
        op.execute(
            f"CREATE TRIGGER plugyard_change_{_TABLE}_insert AFTER INSERT OR DELETE"
            f" ON {_TABLE} FOR EACH ROW EXECUTE FUNCTION plugyard_change_{_TABLE}()"
        )
        return
    for event, row in (("insert", "NEW"), ("delete", "OLD")):
        op.execute(
            f"CREATE TRIGGER plugyard_change_{_TABLE}_{event} AFTER {event.upper()}"
            f" ON {_TABLE} BEGIN INSERT INTO changes (topic, subject, at) VALUES"
            f" ('{_TABLE}', {row}.doc_id, (julianday('now') - 2440587.5) * 86400.0); END"
        )


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS plugyard_change_{_TABLE}_insert ON {_TABLE}")
        op.execute(f"DROP FUNCTION IF EXISTS plugyard_change_{_TABLE}()")
        return
    for event in ("insert", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS plugyard_change_{_TABLE}_{event}")
