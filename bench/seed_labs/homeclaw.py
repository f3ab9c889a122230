"""HomeClaw's own external plugins, from a checkout of its repository, under plugyard.

``run(checkout)`` starts what a HomeClaw user runs — the Python time server
(``external_plugins/time``, port 3102) and the Node.js quote server
(``external_plugins/quote-node``, port 3111) — and registers them with HomeClaw's own
scripts (``register.py``, ``register.js``) against a plugyard server on loopback
(``CORE_URL``, ``CORE_API_KEY``: the scripts unchanged). Then each call of
:data:`CALLS` is made twice:

- through plugyard (``POST /api/v1/plugins/<id>/execute``);
- straight to the plugin server with the ``PluginRequest`` HomeClaw's Core builds
  (``base/PluginManager.py``: ``run_external_plugin``), the reference.

A call is *right* when plugyard's answer carries the text HomeClaw's Core gets (clock
readings masked: the two calls are a moment apart; a random quote is judged by its
shape). It also reads HomeClaw's shipped ``config/external_plugins.json`` (the
persisted registrations) the way plugyard reads that file. Needs ``node`` for the quote
server (without it, those calls fail with the reason). Not run in CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

TIME_PORT, QUOTE_PORT = 3102, 3111
#: (plugin id, capability, parameters)
CALLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("time", "get_time", {"timezone": "Asia/Tokyo"}),
    ("time", "get_time", {"timezone": "America/New_York", "format": "12h"}),
    ("time", "list_timezones", {}),
    ("quote-node", "get_quote", {"style": "short"}),
    ("quote-node", "get_quote_by_topic", {"topic": "success"}),
)
_CLOCK = re.compile(r"\d{2}:\d{2}:\d{2}( [AP]M)?")
_SHORT_QUOTE = re.compile(r'^".+" — .+$')


def run(checkout: Path) -> dict[str, Any]:
    """Register and call HomeClaw's plugins; the counts and each call."""
    checkout = Path(checkout)
    scratch = Path(tempfile.mkdtemp(prefix="homeclaw-lab-"))
    rows: list[dict[str, Any]] = []
    try:
        with _plugyard(scratch) as (url, key), _servers(checkout, scratch) as started:
            registrations = _register(checkout, url, key, started)
            for plugin, capability, params in CALLS:
                rows.append(_call(url, key, plugin, capability, params))
            mirrored = _mirrored(scratch / "external_plugins.json")
        shipped = _shipped(checkout / "config" / "external_plugins.json")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    verdicts = [row["verdict"] for row in rows]
    return {
        "calls": len(rows),
        "right": verdicts.count("right"),
        "refused_correctly": 0,
        "failed": verdicts.count("failed"),
        "registrations": registrations,
        "mirrored_file": mirrored,
        "shipped_file": shipped,
        "rows": rows,
    }


@contextlib.contextmanager
def _plugyard(scratch: Path) -> Iterator[tuple[str, str]]:
    """A plugyard server on a free loopback port; its URL and an admin key."""
    import uvicorn

    from plugyard.server import ServerSettings, create_app
    from plugyard.yard import Settings, Yard

    settings = Settings(
        database=str(scratch / "lab.db"),
        builtins=False,
        embedder="hashing",
        packages_dir=scratch / "packages",
        external_plugins_file=scratch / "external_plugins.json",
        outbound_allow=(f"127.0.0.1:{TIME_PORT}", f"127.0.0.1:{QUOTE_PORT}"),
    )
    with Yard.from_settings(settings) as yard:
        key = yard.keys.bootstrap_admin()
        assert key is not None
        port = _free_port()
        config = uvicorn.Config(
            create_app(yard, ServerSettings(health_checks=False)),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            _wait(f"http://127.0.0.1:{port}/healthz")
            yield f"http://127.0.0.1:{port}", key
        finally:
            server.should_exit = True
            thread.join(10)


@contextlib.contextmanager
def _servers(checkout: Path, scratch: Path) -> Iterator[dict[str, str | None]]:
    """HomeClaw's plugin servers as its run scripts start them; why one did not start."""
    started: dict[str, str | None] = {}
    processes: list[subprocess.Popen[bytes]] = []
    logs = scratch / "logs"
    logs.mkdir()
    commands = {
        "time": ([sys.executable, "-m", "external_plugins.time.server"], checkout, TIME_PORT),
        "quote-node": (["node", "server.js"], checkout / "external_plugins" / "quote-node",
                       QUOTE_PORT),
    }  # fmt: skip
    try:
        for name, (command, cwd, port) in commands.items():
            if shutil.which(command[0]) is None:
                started[name] = f"{command[0]} is not installed"
                continue
            log = (logs / f"{name}.log").open("wb")
            env = {**os.environ, "PORT": str(port), "PYTHONPATH": str(checkout)}
            processes.append(
                subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
            )
            try:
                _wait(f"http://127.0.0.1:{port}/health")
                started[name] = None
            except TimeoutError:
                started[name] = (logs / f"{name}.log").read_text(errors="replace")[-500:]
        yield started
    finally:
        for process in processes:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)


def _register(checkout: Path, url: str, key: str, started: dict[str, str | None]) -> dict[str, str]:
    """HomeClaw's own registration scripts, pointed at plugyard; what each printed."""
    env = {**os.environ, "CORE_URL": url, "CORE_API_KEY": key, "PYTHONPATH": str(checkout)}
    scripts = {
        "time": ([sys.executable, "-m", "external_plugins.time.register"], checkout),
        "quote-node": (["node", "register.js"], checkout / "external_plugins" / "quote-node"),
    }
    printed: dict[str, str] = {}
    for name, (command, cwd) in scripts.items():
        if started.get(name) is not None:
            printed[name] = f"not registered: the server did not start: {started[name]}"
            continue
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
        )
        printed[name] = f"exit {done.returncode}: {(done.stdout + done.stderr).strip()}"
    return printed


def _call(
    url: str, key: str, plugin: str, capability: str, params: dict[str, Any]
) -> dict[str, Any]:
    label = f"{plugin}.{capability} {json.dumps(params)}"
    reply = httpx.post(
        f"{url}/api/v1/plugins/{plugin}/execute",
        json={"operation": capability, "parameters": params},
        headers={"X-API-Key": key},
        timeout=30,
    ).json()
    ours = (reply.get("data") or {}).get("text") if reply.get("status") == "success" else None
    reference = _as_core_calls(plugin, capability, params)
    right = ours is not None and _same(capability, params, ours, reference)
    reason = ours if ours is not None else json.dumps(reply.get("error") or reply)[:300]
    return {
        "call": label,
        "verdict": "right" if right else "failed",
        "plugyard": reason,
        "homeclaw_core": reference,
    }


def _as_core_calls(plugin: str, capability: str, params: dict[str, Any]) -> str:
    """The plugin's ``text`` for the ``PluginRequest`` HomeClaw's Core posts."""
    port = TIME_PORT if plugin == "time" else QUOTE_PORT
    metadata = {"capability_id": capability, "capability_parameters": params}
    request = {
        "request_id": str(uuid.uuid4()), "plugin_id": plugin, "user_input": "",
        "user_id": "", "user_name": "", "channel_name": "", "channel_type": "",
        "app_id": "", "chat_context": None, "metadata": metadata,
        "capability_id": capability, "capability_parameters": params,
    }  # fmt: skip
    try:
        answer = httpx.post(f"http://127.0.0.1:{port}/run", json=request, timeout=30).json()
    except httpx.HTTPError as exc:
        return f"(unreachable: {exc})"
    return str(answer.get("text"))


def _same(capability: str, params: dict[str, Any], ours: str, reference: str) -> bool:
    if capability == "get_quote" and params.get("style") == "short":
        return bool(_SHORT_QUOTE.match(ours) and _SHORT_QUOTE.match(reference))
    return _CLOCK.sub("<clock>", ours) == _CLOCK.sub("<clock>", reference)


def _mirrored(path: Path) -> str:
    """What plugyard wrote to its HomeClaw file: HomeClaw's loader reads a bare list."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable: {exc}"
    if not isinstance(data, list):
        return f"not HomeClaw's form: a {type(data).__name__}"
    return "a bare list of " + ", ".join(
        str(body.get("plugin_id") or body.get("id")) for body in data
    )


def _shipped(path: Path) -> str:
    """HomeClaw's shipped file of persisted registrations, read as plugyard reads it."""
    from plugyard.errors import ManifestError
    from plugyard.registry import external_file

    try:
        bodies = external_file.read_bodies(path)
    except ManifestError as exc:
        first = exc.problems[0]
        return f"refused: {first.code}: {first.message}"
    return f"read: {len(bodies)} registration(s)"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(url: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code < 500:
                return
        time.sleep(0.2)
    raise TimeoutError(url)


def main(argv: list[str]) -> None:
    counts = run(Path(argv[0]))
    for name, printed in counts["registrations"].items():
        print(f"register {name:<11} {printed}")
    for row in counts["rows"]:
        print(f"{row['verdict']:<7} {row['call']}")
        print(f"        plugyard:       {row['plugyard']!r}")
        print(f"        HomeClaw Core:  {row['homeclaw_core']!r}")
    print(f"mirrored file: {counts['mirrored_file']}")
    print(f"shipped config/external_plugins.json: {counts['shipped_file']}")
    print(f"calls {counts['calls']}  right {counts['right']}  failed {counts['failed']}")


if __name__ == "__main__":
    main(sys.argv[1:])
