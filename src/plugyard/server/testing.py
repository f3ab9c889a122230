"""The app on a real loopback socket while a block runs, for clients that need one (an
OpenAI or MCP SDK, a browser) in tests and examples:

    with serving(create_app(yard)) as base_url:
        OpenAI(base_url=f"{base_url}/v1", api_key=key)
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

STARTUP_S = 30.0


class _Server(uvicorn.Server):
    """Says when it has started (or given up), so nobody polls for it."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@contextlib.contextmanager
def serving(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free port of ``host``; yields its base
    URL and stops the server when the block ends."""
    sock = socket.socket()
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        # ready is also set when the server gave up starting (a failing lifespan).
        if not server.ready.wait(STARTUP_S) or not server.started:
            raise RuntimeError("the server did not start")
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_S)
        sock.close()
