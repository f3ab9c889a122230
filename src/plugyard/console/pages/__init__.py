"""The console's pages, one module per page (or per small family of pages)."""

from __future__ import annotations

from fastapi import APIRouter

from plugyard.console.pages import catalog, login, plugin, run

ROUTERS: tuple[APIRouter, ...] = (login.router, catalog.router, plugin.router, run.router)
