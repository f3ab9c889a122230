"""Alembic's entry into plugyard's store: run by ``alembic.command``, never imported.

The store hands over an open connection inside its own transaction (``connection`` in
the config's attributes), so a migration and the lock around it commit together. The
``sqlalchemy.url`` option is the fallback for the ``python -m plugyard.store.migrate``
developer commands.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection, make_url

from plugyard.store.engine import make_engine
from plugyard.store.schema import metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    given = context.config.attributes.get("connection")
    if isinstance(given, Connection):
        _run(given)
        return
    engine = make_engine(make_url(context.config.get_main_option("sqlalchemy.url") or ""))
    try:
        with engine.begin() as connection:
            _run(connection)
    finally:
        engine.dispose()


_main()
