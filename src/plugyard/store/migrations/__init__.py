"""Alembic migrations of the store; applied by :func:`plugyard.store.migrate.upgrade`."""
