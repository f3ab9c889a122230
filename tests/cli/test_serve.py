"""``plugyard serve`` as the README runs it: a real process on loopback, on the embedded
default (SQLite file, bundled plugins, offline search) and on PostgreSQL, printing an
admin key once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PLUGYARD = str(Path(sys.executable).with_name("plugyard"))  # the installed console script
ENV = {**os.environ, "PLUGYARD_EMBEDDER": "hashing", "PYTHONUNBUFFERED": "1"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(db: str, cwd: Path) -> Iterator[tuple[str, str]]:
    """The server's base URL and what it printed before it became ready."""
    port = _port()
    proc = subprocess.Popen(
        [PLUGYARD, "serve", "--port", str(port), "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=ENV,
        cwd=cwd,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                with urllib.request.urlopen(base + "/readyz", timeout=1) as reply:
                    if reply.status == 200:
                        break
            # URLError, a refused connection, or a read past the 1 s timeout while the
            # server is still starting on a loaded machine: all OSError, all "not yet"
            except OSError:
                assert time.monotonic() < deadline, "the server never became ready"
                time.sleep(0.1)  # polling a real process: nothing to wait on but its port
        yield base, ""
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        served.last_output = out  # type: ignore[attr-defined]


def post(url: str, body: dict[str, object], key: str | None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    if key is not None:
        request.add_header("X-API-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def _admin_key(output: str) -> str:
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if "admin API key" in line)
    return lines[at + 1].strip()


def test_serve_answers_calls_with_the_key_it_printed_once(
    database_url: str, tmp_path: Path
) -> None:
    db = database_url
    with served(db, tmp_path) as (base, _):
        status, body = post(base + "/api/v1/plugins/calculator/execute",
                            {"parameters": {"expression": "2 + 3"}}, None)  # fmt: skip
        assert status == 401 and body["error"]["message"]["error"] == "unauthenticated"
    first = served.last_output  # type: ignore[attr-defined]
    if not db.startswith("postgresql"):
        assert f"plugyard: store sqlite:///{db}" in first
    key = _admin_key(first)
    with served(db, tmp_path) as (base, _):
        status, body = post(base + "/api/v1/plugins/calculator/execute",
                            {"parameters": {"expression": "2 + 3"}}, key)  # fmt: skip
        assert status == 200 and body["status"] == "success"
        with urllib.request.urlopen(
            urllib.request.Request(
                base + "/api/v1/search?q=convert+km+to+miles&k=3", headers={"X-API-Key": key}
            )
        ) as reply:
            found = json.load(reply)
        assert found["matches"][0]["plugin"] == "unit-convert"
    assert "admin API key" not in served.last_output  # type: ignore[attr-defined]
