"""HTTP lab: where an execute request's time goes inside the server, without a network.

    python bench/labs/asgi_path.py [--clients 32] [--requests 8000] [--rounds 5] [--profile]
    python bench/labs/asgi_path.py --instructions --requests 2560   # valgrind's counts

bench/http_api.py measures the service as a client sees it (uvicorn, loopback, wrk),
where uvicorn, the kernel and wrk itself share the two cores with the application. This
lab calls the ASGI applications directly, on one uvloop loop, ``--clients`` requests at
a time, each in a task of its own as uvicorn runs them, and reports the application's
own time per request (median of ``--rounds``).
Variants of plugyard's service take its parts out one at a time:

- ``bare``: the bare FastAPI endpoint of bench/http_api.py;
- ``bare-no-otel``: the same with FastAPI's own OpenTelemetry check turned off;
- ``plugyard``: the service as configured (API key, executor, durable audit chain);
- ``audit-no-sql``: the audit events are built and chained (HMAC), not written;
- ``audit-no-chain``: the events are emitted and awaited, never built or written;
- ``audit-none``: the audit step hands its events to a sink that drops them.

The differences between neighbouring rows are what each part costs a request.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
PLUGINS = HERE / "plugins"
BODY = json.dumps({"parameters": {"text": "hello"}}).encode()
VARIANTS = ("bare", "bare-no-otel", "plugyard", "audit-no-sql", "audit-no-chain", "audit-none")

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def bare_app(otel: bool = True) -> tuple[App, str, list[tuple[bytes, bytes]]]:
    import http_api  # bench/http_api.py

    app = http_api.bare_app()
    if not otel:  # FastAPI's own telemetry off, as plugyard's service has it while its own is
        app._native_telemetry.config.update(tracing=False, metrics=False, logs=False)
    return app, "/bare/echo", [(b"content-type", b"application/json")]


def plugyard_app(variant: str, folder: str) -> tuple[App, str, list[tuple[bytes, bytes]]]:
    from plugyard.governance.audit.step import AuditStep
    from plugyard.server import ServerSettings, create_app
    from plugyard.store import audit as stored
    from plugyard.store.keys import SqlKeyRepository
    from plugyard.store.store import Store
    from plugyard.yard import Settings, Yard

    db = str(Path(folder) / "lab.db")
    with Store.open(db) as store:
        key = SqlKeyRepository(store).create("lab", ("reader",))[1]
    yard = Yard.from_settings(Settings(database=db, builtins=False, plugin_dirs=(PLUGINS,)))
    governance = yard.governance
    assert governance is not None
    repository = governance.audit.repository  # type: ignore[attr-defined]
    if variant == "audit-no-sql":
        head = [(0, "0" * 64)]

        def chained(items: list[Any]) -> list[Any]:
            records = stored._chain(head[0], items)
            head[0] = (records[-1].seq, records[-1].hash)
            return records

        repository.append_many = chained
    elif variant == "audit-no-chain":
        repository.append_many = lambda items: []
    elif variant == "audit-none":

        class Dropped:
            def emit(self, *args: object, **kwargs: object) -> None:
                pass

        yard.executor.steps = [
            AuditStep(Dropped()) if step.name == "audit" else step  # type: ignore[arg-type]
            for step in yard.executor.steps
        ]
    app = create_app(yard, ServerSettings(health_checks=False))
    headers = [(b"content-type", b"application/json"), (b"x-api-key", key.encode())]
    return app, "/api/v1/plugins/echo/execute", headers


async def one(app: App, path: str, headers: list[tuple[bytes, bytes]]) -> int:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}  # fmt: skip
    sent = False
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": BODY, "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    return status[0]


async def per_request(app: App, path: str, headers: list[tuple[bytes, bytes]], clients: int,
                      requests: int) -> float:  # fmt: skip
    """Microseconds of the application's time per request, ``clients`` at a time.

    Each request runs in a task of its own, as uvicorn runs one per request: a request
    that waits (for its audit event's group commit) then costs what it costs in the
    service, one more step of its task. Clients that loop over their requests in one
    coroutine would never yield without that wait, and charge it with every loop turn."""
    loop = asyncio.get_running_loop()

    async def wave() -> None:
        tasks = [loop.create_task(one(app, path, headers)) for _ in range(clients)]
        for status in await asyncio.gather(*tasks):
            assert status == 200, status

    started = time.perf_counter()
    for _ in range(requests // clients):
        await wave()
    return (time.perf_counter() - started) / (requests // clients * clients) * 1e6


async def measure(variant: str, args: argparse.Namespace, folder: str) -> list[float]:
    if variant.startswith("bare"):
        app, path, headers = bare_app(otel=variant == "bare")
    else:
        app, path, headers = plugyard_app(variant, folder)
    gc.collect()
    gc.freeze()  # as the service's lifespan does once it has started
    await per_request(app, path, headers, args.clients, args.warm)
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    rounds = [await per_request(app, path, headers, args.clients, args.requests)
              for _ in range(args.rounds)]  # fmt: skip
    if profile is not None:
        profile.disable()
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variant", choices=VARIANTS, help="one variant (a process each)")
    parser.add_argument("--profile", action="store_true", help="cProfile to stderr")
    parser.add_argument("--warm", type=int, default=2000, help="requests before measuring")
    parser.add_argument(
        "--instructions", action="store_true",
        help="count instructions per request under valgrind instead of timing (needs valgrind)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.instructions:
        instructions(args)
        return
    if args.variant is not None:
        import uvloop

        with tempfile.TemporaryDirectory() as folder:
            rounds = uvloop.run(measure(args.variant, args, folder))
        print(json.dumps(rounds))
        return
    import subprocess

    print(f"{'variant':16}{'µs/request':>12}   rounds")
    for variant in VARIANTS:
        command = [sys.executable, __file__, "--variant", variant, "--clients",
                   str(args.clients), "--requests", str(args.requests), "--rounds",
                   str(args.rounds)] + (["--profile"] if args.profile else [])  # fmt: skip
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rounds = json.loads(out.strip().splitlines()[-1])
        shown = ", ".join(f"{r:.1f}" for r in rounds)
        print(f"{variant:16}{statistics.median(rounds):>12.1f}   {shown}")


def instructions(args: argparse.Namespace) -> None:
    """Instructions per request, counted by valgrind's callgrind: the same on a busy
    machine as on a quiet one, where the timings of this lab move by ±20 % from run to
    run. Each variant runs twice, with no measured requests and with ``--requests``; the
    difference over the requests is what one costs (start-up and warm-up cancel)."""
    import re
    import shutil
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")

    def counted(variant: str, rounds: int) -> int:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                   sys.executable, __file__, "--variant", variant, "--clients",
                   str(args.clients), "--requests", str(args.requests), "--rounds",
                   str(rounds), "--warm", "640"]  # fmt: skip
        err = subprocess.run(command, check=True, capture_output=True, text=True).stderr
        found = re.search(r"Collected\s*:\s*(\d+)", err)
        assert found is not None, err[-2000:]
        return int(found.group(1))

    print(f"{'variant':16}{'instructions/request':>22}")
    with ThreadPoolExecutor(2) as pool:  # one valgrind per core
        for variant in VARIANTS:
            idle, busy = pool.map(counted, (variant, variant), (0, 1))
            print(f"{variant:16}{(busy - idle) / args.requests:>22,.0f}")


if __name__ == "__main__":
    main()
