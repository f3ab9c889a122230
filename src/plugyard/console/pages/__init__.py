"""The console's pages, one module per page (or per small family of pages)."""

from __future__ import annotations

from fastapi import APIRouter

from plugyard.console.pages import (
    admin,
    approvals,
    ask,
    catalog,
    feeds,
    login,
    pipelines,
    plugin,
    run,
    secrets,
)

ROUTERS: tuple[APIRouter, ...] = tuple(
    m.router
    for m in (login, catalog, plugin, run, approvals, secrets, feeds, admin, pipelines, ask)
)
