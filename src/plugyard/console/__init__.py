"""The web console (docs/console.md): server-rendered pages over the same yard and API
keys as the REST API, served by ``plugyard serve`` at ``/``.

:func:`install` adds the console's routes, its local ``/docs`` and ``/redoc``, and the
shared state its pages read to a server app.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRouter

from plugyard.console import assets
from plugyard.console.catalog_memo import CatalogMemo
from plugyard.console.pages import ROUTERS
from plugyard.console.sessions import SessionStore
from plugyard.console.web import Console, templates
from plugyard.store.kv import SqlKeyValueRepository
from plugyard.yard import Yard

__all__ = ["install", "routers"]


def routers() -> tuple[APIRouter, ...]:
    return (assets.router, *ROUTERS)


def install(app: FastAPI, yard: Yard) -> None:
    """Give ``app`` the console; its routes are the caller's to include (so the app's
    own route table, server/methods.py, knows them)."""
    memo = CatalogMemo()
    yard.registry.subscribe(memo.changed)
    sessions = SessionStore(SqlKeyValueRepository(yard.store))
    app.state.console = Console(yard, sessions, templates(), memo)
