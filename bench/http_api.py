"""HTTP API overhead: plugyard's ``execute`` against a bare FastAPI endpoint.

    bash scripts/bench.sh http_api [--seconds 5] [--rounds 3]

Both serve the same trivial async plugin function (bench/plugins/tool/echo) from
uvicorn on loopback (uvloop, httptools), each in its own process, in the same run;
``wrk`` (Debian package, installed with apt-get when missing) loads them with 1 and 32
connections. plugyard's path is the whole service: API-key check, body read, the
executor (validation, deadline, audit event) and the result envelope. After the runs the
plugyard process reports its audit events and execute responses, which must be equal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from fastapi import FastAPI, Request
from starlette.responses import Response

HERE = Path(__file__).resolve().parent
#: bare FastAPI; plugyard as configured (durable audit); plugyard with audit in memory.
KINDS = ("bare", "plugyard", "plugyard-memaudit")
PLUGINS = HERE / "plugins"
BODY = {"parameters": {"text": "hello"}}
LUA = """wrk.method = "POST"
wrk.body = '{body}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "{key}"
"""


# ----------------------------------------------------------------------------- servers


def bare_app() -> FastAPI:
    """The bare FastAPI endpoint plugyard's execute is measured against."""
    sys.path.insert(0, str(PLUGINS / "tool" / "echo"))
    from plugin import echo  # type: ignore[import-not-found]

    app = FastAPI()

    @app.post("/bare/echo")
    async def bare(request: Request) -> Response:
        body = await request.json()
        data = await echo(**body["parameters"])
        return Response(json.dumps({"status": "success", "data": data}),
                        media_type="application/json")  # fmt: skip

    return app


def serve(kind: str, port: int, db: str) -> None:
    """Run one server in this process (the child side)."""
    import uvicorn

    if kind == "bare":
        served = bare_app()
    else:
        from plugyard.server import ServerSettings, create_app
        from plugyard.yard import Settings, Yard

        yard = Yard.from_settings(Settings(database=db, builtins=False, plugin_dirs=(PLUGINS,)))
        counts = {"audit": 0, "responses": 0}
        governance = yard.governance
        inner = governance.audit if kind == "plugyard" and governance is not None else None

        class CountingAudit:
            """Counts events, then hands them to the yard's own sink (the durable,
            hash-chained log) — or, for ``plugyard-memaudit``, to nothing."""

            def emit(self, *args: object, **kwargs: object) -> None:
                counts["audit"] += 1
                if inner is not None:
                    inner.emit(*args, **kwargs)  # type: ignore[arg-type]

            async def settle(self) -> None:  # the chain's group commit, as in production
                if inner is not None:
                    await inner.settle()  # type: ignore[attr-defined]

            def flush_pending(self) -> None:
                if inner is not None:
                    inner.flush_pending()  # type: ignore[attr-defined]

        from plugyard.governance.audit.step import AuditStep

        # The audit step of the call path, writing through the counter.
        yard.executor.steps = [
            AuditStep(CountingAudit()) if step.name == "audit" else step  # type: ignore[arg-type]
            for step in yard.executor.steps
        ]
        app = create_app(yard, ServerSettings(health_checks=False))

        # Plain ASGI, not ``@app.middleware``: Starlette's BaseHTTPMiddleware costs more
        # per request than the whole plugyard call path and would be measured as plugyard.
        inner_app = app

        async def counting(scope, receive, send):  # type: ignore[no-untyped-def]
            async def sent(message):  # type: ignore[no-untyped-def]
                if message["type"] == "http.response.start" and scope["path"].endswith("/execute"):
                    counts["responses"] += 1
                await send(message)

            await inner_app(scope, receive, sent)

        @app.get("/bench/counts")
        async def report() -> dict[str, int]:
            return counts

        served = counting
    uvicorn.run(served, host="127.0.0.1", port=port, loop="uvloop", http="httptools",
                log_level="warning", access_log=False)  # fmt: skip


# ------------------------------------------------------------------------------ driver


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int) -> None:
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on {port} did not start")


def _wrk() -> str:
    found = shutil.which("wrk")
    if found is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=False)
        found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    return found


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    found = re.match(r"([\d.]+)(us|ms|s)", text)
    assert found, text
    return float(found.group(1)) * _UNITS[found.group(2)]


def run_wrk(wrk: str, url: str, connections: int, seconds: int, script: str) -> dict[str, float]:
    threads = min(connections, 2)
    out = subprocess.run(
        [wrk, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": p50, "p99": p99, "total": total,
            "non2xx": int(bad.group(1)) if bad else 0}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians")
    parser.add_argument("--serve", choices=list(KINDS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.db)
        return
    wrk = _wrk()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        from plugyard.store.keys import SqlKeyRepository
        from plugyard.store.store import Store

        with Store.open(db) as store:
            key = SqlKeyRepository(store).create("bench", ("reader",))[1]
        ports = {kind: _free_port() for kind in KINDS}
        procs = {
            kind: subprocess.Popen(
                [sys.executable, __file__, "--serve", kind, "--port", str(port), "--db", db]
            )
            for kind, port in ports.items()
        }
        try:
            for port in ports.values():
                _wait(port)
            script = Path(tmp) / "post.lua"
            script.write_text(LUA.replace("{body}", json.dumps(BODY)).replace("{key}", key))
            execute = "/api/v1/plugins/echo/execute"
            urls = {kind: f"http://127.0.0.1:{port}{execute}" for kind, port in ports.items()}
            urls["bare"] = f"http://127.0.0.1:{ports['bare']}/bare/echo"
            for url in urls.values():  # warm up
                run_wrk(wrk, url, 8, 1, str(script))
            rows = []
            # Rounds interleave the servers so that a noisy moment hits all of them; the
            # table gives medians, and each ratio is the median of per-round ratios.
            for round_no in range(args.rounds):
                for connections in (1, 32):
                    for kind in KINDS:
                        r = run_wrk(wrk, urls[kind], connections, args.seconds, str(script))
                        rows.append((kind, connections, round_no, r))
            counts = {}
            for kind in KINDS[1:]:
                counts_url = f"http://127.0.0.1:{ports[kind]}/bench/counts"
                with urllib.request.urlopen(counts_url) as reply:
                    counts[kind] = json.load(reply)
        finally:
            for proc in procs.values():
                proc.terminate()
                proc.wait(10)
    print(f"{'server':<18} {'clients':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for connections in (1, 32):
        for kind in KINDS:
            mine = [r for k, c, _, r in rows if k == kind and c == connections]
            med = {f: statistics.median(r[f] for r in mine) for f in ("rps", "p50", "p99")}
            bad = sum(r["non2xx"] for r in mine)
            print(
                f"{kind:<18} {connections:>7} {med['rps']:>9,.0f} {med['p50']:>8.2f}"
                f" {med['p99']:>8.2f} {bad:>8.0f}"
            )
    failed = False
    for kind in KINDS[1:]:
        for connections in (1, 32):
            ratios = [
                ours["rps"] / bare["rps"]
                for k, c, n, ours in rows
                if k == kind and c == connections
                for bk, bc, bn, bare in rows
                if bk == "bare" and bc == connections and bn == n
            ]
            spread = ", ".join(f"{x:.0%}" for x in ratios)
            print(
                f"{kind} / bare at {connections:>2} clients: {statistics.median(ratios):.0%}"
                f" (rounds: {spread})"
            )
        seen = counts[kind]
        same = seen["audit"] == seen["responses"]
        failed = failed or not same
        sent = sum(r["total"] for k, _, _, r in rows if k == kind)
        print(
            f"{kind}: audit events {seen['audit']:,}, execute responses "
            f"{seen['responses']:,} (wrk counted {sent:,} + warm-up): "
            f"{'EQUAL' if same else 'MISMATCH'}"
        )
    if failed or any(r["non2xx"] for _, _, _, r in rows):
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
