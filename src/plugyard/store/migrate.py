"""Alembic, driven from code: the store migrates itself to ``head`` when it opens.

The migration scripts live inside the package, so they install with it and no
``alembic.ini`` is needed. For developers::

    python -m plugyard.store.migrate revision "add the vectors table"
    python -m plugyard.store.migrate upgrade [URL-OR-PATH]
    python -m plugyard.store.migrate current [URL-OR-PATH]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from plugyard.errors import StoreError

# Alembic is imported only to migrate: a store already at head (every start but the
# first after an upgrade) is opened without it, which keeps a command's start short.
# SQLAlchemy too, for the store in a SQLite file that checks its head on its own.
if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_REVISION_FILE = re.compile(r"r(\d{4})_\w+\.py")
#: An arbitrary, fixed key: replicas starting together take turns migrating PostgreSQL.
_PG_LOCK_KEY = 0x706C7567796172


def config(url: str | None = None, *, scripts: Path = MIGRATIONS) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(scripts))
    cfg.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


@cache
def head() -> str:
    """The newest revision the installed package knows: the highest-numbered file's, as
    revisions are numbered in one line (a test holds alembic to the same answer)."""
    numbers = [
        int(found.group(1))
        for path in (MIGRATIONS / "versions").iterdir()
        if (found := _REVISION_FILE.fullmatch(path.name))
    ]
    if not numbers:
        raise RuntimeError("no migration revisions are installed")
    return f"{max(numbers):04d}"


def current(connection: Connection) -> str | None:
    """The revision the database is at; ``None`` for an empty database."""
    from sqlalchemy import inspect, text

    if not inspect(connection).has_table("alembic_version"):
        return None
    found = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if found is None else str(found)


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Bring the database to ``revision`` inside the caller's transaction."""
    from sqlalchemy import text

    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
    found = current(connection)
    if revision == "head" and found == head():
        return
    if found is not None and found.isdigit() and int(found) > int(head()):
        # An older replica beside newer ones: refuse rather than run against a schema
        # it does not know (alembic would only say it cannot find the revision).
        raise StoreError(
            f"the database is at schema revision {found}, newer than this plugyard's "
            f"{head()}: upgrade plugyard on this machine (the other replicas migrated it)",
            code="schema_too_new",
        )
    from alembic import command

    cfg = config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


def downgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    cfg = config()
    cfg.attributes["connection"] = connection
    command.downgrade(cfg, revision)


def next_revision_id(scripts: Path = MIGRATIONS) -> str:
    """Revisions are numbered ``0001``, ``0002``, … so their order reads at a glance."""
    from alembic.script import ScriptDirectory

    numbers = [
        int(script.revision)
        for script in ScriptDirectory.from_config(config(scripts=scripts)).walk_revisions()
        if script.revision.isdigit()
    ]
    return f"{max(numbers, default=0) + 1:04d}"


def new_revision(message: str, scripts: Path = MIGRATIONS) -> Path:
    """Write the next, empty revision file; returns its path."""
    from alembic import command

    script = command.revision(config(scripts=scripts), message, rev_id=next_revision_id(scripts))
    if script is None or isinstance(script, list):
        raise RuntimeError("alembic wrote no single revision")
    return Path(script.path)


def main(argv: Sequence[str] | None = None) -> None:
    # Imported here: the store module imports this one.
    from plugyard.store.store import Store

    parser = argparse.ArgumentParser(prog="python -m plugyard.store.migrate")
    sub = parser.add_subparsers(dest="command", required=True)
    rev = sub.add_parser("revision", help="write a new, empty revision file")
    rev.add_argument("message")
    for name in ("upgrade", "current"):
        cmd = sub.add_parser(name)
        cmd.add_argument("target", nargs="?", help="URL or SQLite path (default: settings)")
    args = parser.parse_args(argv)
    if args.command == "revision":
        new_revision(args.message)
        return
    store = Store.open(args.target, migrate=args.command == "upgrade")
    try:
        print(store.revision())
    finally:
        store.close()


if __name__ == "__main__":
    main()
