"""The composition root: ``Yard.from_settings()`` builds everything, and nothing else does.

A yard opens the store (SQLite by default, PostgreSQL when ``PLUGYARD_DATABASE_URL``
says so), syncs the registry from its sources (the bundled plugins, plugin folders, a
catalog file, allowlisted entry points, and externals already in the store), lets each
runtime check and refine what it will run — only what changed since the last start
(:mod:`plugyard.registry.memory`) — and wires the executor, the one call path, when it
is first used.

One module per concern: :mod:`.settings`, what starts (:mod:`.start`), the network and
the runtimes, search (:mod:`.finding`), governance (:mod:`.governing`), execution,
external plugins, the flows, management, and a backend worker's yard (:mod:`.worker`);
:mod:`.root` composes them into :class:`Yard`.
"""

from __future__ import annotations

from plugyard.yard.root import Yard
from plugyard.yard.settings import Settings, external_plugins_path, packages_root
from plugyard.yard.start import check
from plugyard.yard.worker import worker_executor

__all__ = [
    "Settings",
    "Yard",
    "check",
    "external_plugins_path",
    "packages_root",
    "worker_executor",
]
