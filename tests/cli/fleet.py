"""Helpers of the fleet test (and of bench/fleet.py): ``plugyard serve`` replicas on one
PostgreSQL database, and an HTTP plugin server in this process that counts its effects."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PLUGYARD = str(Path(sys.executable).with_name("plugyard"))
READY_S = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EffectServer:
    """POST /effect performs one effect (counted) and answers a HomeClaw ``PluginResult``
    (the plugin registers with a HomeClaw body); GET /health answers 200."""

    def __init__(self) -> None:
        self.effects = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer({"ok": True})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with outer._lock:
                    outer.effects += 1
                    count = outer.effects
                self._answer({"success": True, "text": str(count), "metadata": {"count": count}})

            def _answer(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.http.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def registration(server: EffectServer, plugin_id: str = "effects") -> dict[str, Any]:
    return {
        "plugin_id": plugin_id,
        "name": "Effects",
        "description": "Performs counted effects over HTTP.",
        "type": "http",
        "health_check_url": f"{server.url}/health",
        "config": {"base_url": server.url, "timeout_sec": 5},
        "capabilities": [
            {"id": "effect", "name": "Effect", "description": "Performs one effect.",
             "parameters": [{"name": "n", "type": "number"}], "method": "POST",
             "path": "/effect"},
        ],
    }  # fmt: skip


class Replica:
    def __init__(self, proc: subprocess.Popen[str], base: str) -> None:
        self.proc, self.base = proc, base

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def request(
        self, method: str, path: str, body: Any = None, key: str | None = None, **headers: str
    ) -> tuple[int, Any]:
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data, method=method)
        request.add_header("Content-Type", "application/json")
        if key is not None:
            request.add_header("X-API-Key", key)
        for name, value in headers.items():
            request.add_header(name.replace("_", "-"), value)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, json.load(reply)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)


@contextmanager
def replicas(database_url: str, count: int, workdir: Path, allow: str) -> Iterator[list[Replica]]:
    env = {**os.environ, "PLUGYARD_EMBEDDER": "hashing", "PYTHONUNBUFFERED": "1",
           "PLUGYARD_BUILTINS": "1", "PLUGYARD_HOME": str(workdir)}  # fmt: skip
    procs: list[Replica] = []
    logs = []
    try:
        for i in range(count):
            port = free_port()
            log = (workdir / f"replica{i}.log").open("w")
            logs.append(log)
            proc = subprocess.Popen(
                [PLUGYARD, "serve", "--port", str(port), "--db", database_url,
                 "--allow-outbound", allow, "--log-level", "warning"],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=workdir, text=True,
            )  # fmt: skip
            procs.append(Replica(proc, f"http://127.0.0.1:{port}"))
        for replica in procs:
            _wait_ready(replica)
        yield procs
    finally:
        for replica in procs:
            if replica.proc.poll() is None:
                replica.proc.terminate()
                try:
                    replica.proc.wait(30)
                except subprocess.TimeoutExpired:
                    replica.kill()
        for log in logs:
            log.close()


def _wait_ready(replica: Replica) -> None:
    deadline = time.monotonic() + READY_S
    while True:
        assert replica.proc.poll() is None, "a replica exited while starting"
        try:
            with urllib.request.urlopen(replica.base + "/readyz", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:  # refused, reset, or a loaded machine's 1 s read timeout: not yet
            pass
        assert time.monotonic() < deadline, "a replica never became ready"
        time.sleep(0.1)  # a real process: nothing to wait on but its port
