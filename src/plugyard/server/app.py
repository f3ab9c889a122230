"""The service: one FastAPI app, built by :func:`create_app` from a yard (or from
settings, when the app owns the yard it builds).

The app's lifespan keeps the outbound HTTP session open and runs the health checker
while it serves; the yard stays the only place anything is wired (plugyard.yard).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from plugyard import __version__, console
from plugyard.server import errors, methods, openapi
from plugyard.server.auth import Authenticator
from plugyard.server.background import (
    FeedLoop,
    at_start,
    follow_changes,
    keep_in_step,
    prune_changes,
)
from plugyard.server.fastpath import ExecuteFastPath
from plugyard.server.limits import BodyLimit
from plugyard.server.mcp import mcp_routes
from plugyard.server.mcp import running as mcp_running
from plugyard.server.methods import ConcretePaths, Resources
from plugyard.server.openai_errors import OpenAIErrors
from plugyard.server.query import SingleValued
from plugyard.server.routes import (
    accounts,
    ask,
    execute,
    feeds,
    governance,
    mcp_tools,
    memory,
    openai_compat,
    packages,
    pipelines,
    plugins,
    probes,
    reasoning,
    search,
    sessions,
)
from plugyard.store.changes import KEEP_LAST, KEEP_S, Retention
from plugyard.telemetry import active as telemetry_active
from plugyard.yard import Settings, Yard


@dataclass(frozen=True)
class ServerSettings:
    """What the HTTP surface adds to the yard's settings."""

    max_body_bytes: int = 1024 * 1024
    health_checks: bool = True  # poll external plugins while serving
    key_cache_s: float = 5.0  # how long a verified API key is trusted without a read
    # server/background.py: build the search index at start, and read the registry
    # again from the store every refresh_s (0: never). Off unless serving for real.
    index_at_start: bool = False
    refresh_s: float = 0.0
    # server/background.py: run the due feeds every feeds_s seconds (0: never; then
    # POST /api/v1/feeds/run-due or ``plugyard feeds run-due`` runs them).
    feeds_s: float = 0.0
    follow_changes: bool = False  # apply other replicas' changes (server/background.py)
    # What the change log keeps for replicas catching up (docs/scaling.md); pruned by one
    # replica at a time, only while following changes.
    change_log: Retention = field(default_factory=Retention)

    @classmethod
    def for_serving(cls, environ: Mapping[str, str] | None = None) -> ServerSettings:
        """What ``plugyard serve`` runs with; the change log's retention from
        ``PLUGYARD_CHANGE_LOG_KEEP_S`` and ``PLUGYARD_CHANGE_LOG_KEEP_LAST``."""
        env = os.environ if environ is None else environ
        retention = Retention(
            keep_s=float(env.get("PLUGYARD_CHANGE_LOG_KEEP_S", KEEP_S)),
            keep_last=int(env.get("PLUGYARD_CHANGE_LOG_KEEP_LAST", KEEP_LAST)),
        )
        return cls(index_at_start=True, refresh_s=30.0, feeds_s=10.0, follow_changes=True,
                   change_log=retention)  # fmt: skip


def create_app(
    yard: Yard | None = None,
    settings: ServerSettings | None = None,
    *,
    yard_settings: Settings | None = None,
) -> FastAPI:
    """The ASGI app. Given a ``yard`` the caller keeps owning it; otherwise the app
    builds one from ``yard_settings`` (default: the environment) and closes it on
    shutdown."""
    server = settings or ServerSettings.for_serving()
    owned = yard is None
    the_yard = yard if yard is not None else Yard.from_settings(yard_settings)
    mcp_endpoints, mcp_managers = mcp_routes(the_yard)  # /mcp and /mcp/discovery

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await the_yard.outbound.start()
        # Everything built so far lives as long as the server: keep it out of the cyclic
        # collector's full passes, which otherwise stall a busy loop for ~100 ms each
        # (bench/RESULTS.md, "HTTP API": the durable-audit p99).
        gc.collect()
        gc.freeze()
        await at_start(the_yard)
        watcher = None
        if server.follow_changes:
            watcher = await asyncio.to_thread(follow_changes, the_yard, app.state.auth.forget)
            watcher.start()
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(
                keep_in_step(the_yard, stop, index_at_start=server.index_at_start,
                             refresh_s=server.refresh_s),
                name="plugyard-background",
            )
        ]  # fmt: skip
        if watcher is not None:
            tasks.append(
                asyncio.create_task(
                    prune_changes(the_yard, stop, server.change_log), name="plugyard-prune"
                )
            )
        if server.feeds_s > 0 and the_yard.settings.governed:
            loop = app.state.feed_loop = FeedLoop(the_yard, server.feeds_s)
            tasks.append(asyncio.create_task(loop.run(stop), name="plugyard-feeds"))
        if server.health_checks and the_yard.health is not None:
            tasks.append(asyncio.create_task(the_yard.health.run(stop), name="plugyard-health"))
        try:
            async with mcp_running(mcp_managers, the_yard):
                yield
        finally:
            stop.set()
            if watcher is not None:
                await asyncio.to_thread(watcher.stop)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await the_yard.outbound.aclose()
            if owned:
                the_yard.close()

    app = _App(
        server.max_body_bytes,
        title="plugyard",
        version=__version__,
        summary="A plugin host for LLM applications: list, find, register and call plugins.",
        lifespan=lifespan,
        # Served by the console with local assets (console/assets.py), not from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.yard = the_yard
    app.state.auth = Authenticator(the_yard.keys, ttl_s=server.key_cache_s)
    app.state.server_settings = server
    errors.install(app)
    modules: tuple[ModuleType, ...] = (execute, plugins, search, memory, ask, pipelines, packages,
                                       governance, feeds, mcp_tools, probes, accounts,
                                       openai_compat)  # fmt: skip
    modules = (*modules, reasoning, sessions)  # reasoning flows (docs/reasoning.md)
    for module in modules:
        app.include_router(module.router)
    console.install(app, the_yard)
    pages = console.routers()
    for router in pages:
        app.include_router(router)
    app.router.routes.extend(mcp_endpoints)
    # The routes as declared: what an included router becomes inside FastAPI varies by version.
    app.resources = Resources(
        [
            *app.router.routes,
            *(route for m in modules for route in m.router.routes),
            *(route for r in pages for route in r.routes),
        ]
    )
    methods.install(app, app.resources)
    return app


class _App(FastAPI):
    """FastAPI with OpenAI's error shape on ``/v1`` (server/openai_errors.py), the body
    cap, the one-value query rule (server/query.py), the execute fast path
    (server/fastpath.py) and the concrete-path rule (server/methods.py) in front of its
    whole middleware stack: on the hot route, the framework's own layers cost more than
    the call they carry."""

    resources: Resources

    def __init__(self, max_body_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._max_body_bytes = max_body_bytes
        self.resources = Resources(())

    def openapi(self) -> dict[str, Any]:
        return openapi.tidy(super().openapi())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # FastAPI's own HTTP spans and metrics follow plugyard's telemetry switch
        # (docs/telemetry.md). Off, a request skips FastAPI's look-up of OpenTelemetry's
        # global providers, which costs about 3 µs each time (bench/RESULTS.md).
        if scope["type"] == "http" and not self.root_path and telemetry_active() is None:
            await Starlette.__call__(self, scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    def build_middleware_stack(self) -> ASGIApp:
        routed = ConcretePaths(super().build_middleware_stack(), self.resources)
        checked = SingleValued(ExecuteFastPath(routed), self.openapi)
        return OpenAIErrors(BodyLimit(checked, self._max_body_bytes))
