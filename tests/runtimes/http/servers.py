"""Loopback servers for the tests: the external plugin server in a subprocess, and a
canary that counts every connection made to it (and must count none)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

SERVER = Path(__file__).with_name("plugin_server.py")


@dataclass
class PluginServer:
    """``plugin_server.py`` in a subprocess; ``start`` again on the same port restarts."""

    port: int = 0
    process: subprocess.Popen[str] | None = None

    def start(self) -> PluginServer:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), str(self.port)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # blocks until it listens
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def allow(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Canary:
    """A loopback listener that records every connection it accepts."""

    sock: socket.socket = field(default_factory=socket.socket)
    accepted: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            self.accepted.append(peer)
            conn.close()

    def close(self) -> None:
        self.sock.close()
