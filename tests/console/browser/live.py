"""plugyard serving on loopback in a thread, and Debian's Chromium driven by Playwright.

The server listens on a socket bound before it starts, so a browser can connect at once
(the connection waits in the backlog): nothing polls for readiness. The browser is the
system's ``/usr/bin/chromium`` (``scripts/setup.sh`` installs it from Debian's
packages); Playwright never downloads one. Without it the browser tests are skipped,
except on CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import uvicorn

from plugyard.store.testing import on_ci

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parents[2] / "clients" / "node" / "node_modules" / "axe-core" / "axe.min.js"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def require(path: Path, what: str, how: str) -> None:
    if path.exists():
        return
    reason = f"{what} is not installed ({path})"
    if on_ci():
        pytest.fail(f"{reason}: {how}")
    pytest.skip(reason)


def require_chromium() -> str:
    found = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    require(Path(found or CHROMIUM), "Chromium", "scripts/setup.sh installs Debian's chromium")
    return str(found or CHROMIUM)


@contextmanager
def serving(app: object) -> Iterator[str]:
    """``app`` served on ``http://127.0.0.1:<port>`` until the block ends."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[listener])), daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


def loopback(url: str) -> bool:
    """Whether ``url`` stays on this machine (``data:``/``blob:``/``about:`` never leave)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-error"):
        return True
    return (parts.hostname or "") in LOOPBACK


def launch_options() -> dict[str, object]:
    options: dict[str, object] = {"executable_path": require_chromium()}
    if os.geteuid() == 0:  # Chromium's own sandbox cannot start as root
        options["chromium_sandbox"] = False
        options["args"] = ["--no-sandbox"]
    return options
