"""The store: plugyard's one database (SQLite by default, PostgreSQL for replicas).

Import what you need from the modules: ``store.Store``, ``plugins.PluginRow`` and the
repositories. This package never imports the registry or anything above it.
"""
