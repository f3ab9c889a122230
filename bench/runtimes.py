"""Round trips of a trivial operation through the subprocess runtime, next to the official
MCP SDK's stdio client — in one run, so the ratios are fair on a noisy machine.

    bash scripts/bench.sh runtimes            # the table
    bash scripts/bench.sh runtimes --soak     # 1,000 calls on a pool (fds, RSS) + chaos

Rows: (a) a persistent wrapper worker through the runtime (sequential round trip, and
calls/s with 32 in flight), also through the whole executor (``Yard.call``); (b) the same
worker sandboxed (bubblewrap); (c) spawn-per-call (``mode: oneshot``); (d) the MCP SDK's
stdio client calling an equivalent tool of an ``MCPServer`` over stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from plugyard.manifest.model import Operation, PluginDescriptor, SubprocessRuntime
from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import SubprocessPluginRuntime

WRAPPER = """
    import json, os, sys
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        req = json.loads(line)
        if req["method"] != "execute":
            error = {"code": "invalid_request", "message": "no describe"}
            out.write(json.dumps({"id": req["id"], "error": error}).encode() + b"\\n")
            out.flush()
            continue
        params = req["params"].get("parameters", {})
        do = params.get("do")
        if do == "hang":
            import time; time.sleep(600)
        data = {"status": "success", **params}
        out.write(json.dumps({"id": req["id"], "result": {"data": data}}).encode() + b"\\n")
        out.flush()
"""
MCP_SERVER = """
    from mcp.server.mcpserver import MCPServer
    server = MCPServer("bench")

    @server.tool()
    def echo(x: int) -> dict:
        return {"x": x}

    server.run("stdio")
"""
CHAOS = {
    "hang": "import time; time.sleep(600)",
    "ignore SIGTERM": "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "time.sleep(600)",
    "setsid grandchild": "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
    "    if os.fork() == 0: time.sleep(600)\n    os._exit(0)\ntime.sleep(600)",
    "100 MB line": "import sys; sys.stdout.write('x' * (100 << 20)); sys.stdout.flush(); "
    "import time; time.sleep(600)",
    "close stdout": "import os, time; os.close(1); time.sleep(600)",
}


def target(folder: Path, *, trust: str = "trusted", mode: str = "persistent",
           code: str = WRAPPER, env: dict[str, str] | None = None,
           timeout_ms: int | None = None) -> Target:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    (folder / "wrapper.py").write_text(textwrap.dedent(code))
    descriptor = PluginDescriptor(
        id=f"bench-{folder.name}",
        name="bench",
        operations=(Operation(id="echo"),),
        runtime=SubprocessRuntime(
            command="python3", args=("wrapper.py",), protocol_version="1", env=env or {}
        ),
        config={"mode": mode, "workers": 1},
        timeout_ms=timeout_ms,
    )
    return Target(descriptor, str(folder), trust, folder.name)  # type: ignore[arg-type]


async def median_s(fn: Callable[[], Awaitable[Any]], calls: int) -> float:
    for _ in range(min(calls // 10, 50)):
        await fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def per_second(fn: Callable[[], Awaitable[Any]], calls: int, in_flight: int = 32) -> float:
    start = time.perf_counter()
    for _ in range(calls // in_flight):
        await asyncio.gather(*(fn() for _ in range(in_flight)))
    return (calls // in_flight * in_flight) / (time.perf_counter() - start)


async def runtime_rows(base: Path, calls: int) -> dict[str, tuple[float, float | None]]:
    runtime = SubprocessPluginRuntime(describe=False)
    rows: dict[str, tuple[float, float | None]] = {}
    cases = [("(a) persistent worker, runtime.invoke", "trusted", "persistent", calls)]
    if unavailable_reason() is None:
        cases.append(("(b) persistent worker, sandboxed", "untrusted", "persistent", calls))
    cases.append(("(c) spawn per call (oneshot)", "trusted", "oneshot", max(calls // 100, 20)))
    for label, trust, mode, n in cases:
        one = target(base / label[1], trust=trust, mode=mode)
        op = one.descriptor.operations[0]

        async def call(one: Target = one, op: Operation = op) -> Outcome:
            answer = await runtime.invoke(one, op, {"x": 1}, CallContext("b"), None)
            assert isinstance(answer, Outcome) and answer.status == "success", answer
            return answer

        await call()  # start the worker
        rows[label] = (await median_s(call, n), await per_second(call, n, min(32, n)))
    await runtime.aclose()
    return rows


def executor_row(base: Path, calls: int) -> tuple[float, float]:
    from plugyard.yard import Settings, Yard

    plugins = base / "yard"
    folder = plugins / "echo"
    folder.mkdir(parents=True)
    (folder / "wrapper.py").write_text(textwrap.dedent(WRAPPER))
    (folder / "manifest.json").write_text(
        '{"id": "echo", "type": "gs-plugin", "description": "Echoes.", "command": "python3",'
        ' "args": ["wrapper.py"], "protocolVersion": 1}'
    )
    settings = Settings(database=str(base / "y.db"), builtins=False, plugin_dirs=(plugins,),
                        governed=False)  # fmt: skip
    with Yard.from_settings(settings) as yard:

        async def both() -> tuple[float, float]:
            async def call() -> Any:
                result = await yard.call("echo", "solve", {"prompt": "p"})
                assert result.status == "success", result.error
                return result

            await call()
            return await median_s(call, calls), await per_second(call, calls)

        return asyncio.run(both())


async def mcp_row(base: Path, calls: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    server = base / "mcp_server.py"
    server.write_text(textwrap.dedent(MCP_SERVER))
    params = StdioServerParameters(command=sys.executable, args=[str(server)])
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

            async def call() -> Any:
                result = await session.call_tool("echo", {"x": 1})
                assert not result.is_error, result
                return result

            return await median_s(call, calls), await per_second(call, calls)


def table(base: Path, calls: int) -> None:
    rows = asyncio.run(runtime_rows(base, calls))
    rows["(a') persistent worker, full executor (Yard.call)"] = executor_row(base, calls)
    rows["(d) MCP SDK stdio client -> MCPServer"] = asyncio.run(mcp_row(base, max(calls // 5, 100)))
    width = max(map(len, rows))
    print(f"{'path':<{width}}  {'median round trip':>18}  {'calls/s (32 in flight)':>22}")
    for label, (median, rate) in rows.items():
        print(f"{label:<{width}}  {median * 1e6:>15.1f} µs  {rate or 0:>22,.0f}")
    persistent = rows["(a) persistent worker, runtime.invoke"][0]
    mcp = rows["(d) MCP SDK stdio client -> MCPServer"][0]
    print(f"\nMCP stdio / persistent worker: {mcp / persistent:.1f}x")


def soak(base: Path) -> None:
    async def pool_soak() -> tuple[int, float, float]:
        runtime = SubprocessPluginRuntime(describe=False)
        one = target(base / "soak")
        op = one.descriptor.operations[0]

        async def call(i: int) -> None:
            answer = await runtime.invoke(one, op, {"i": i}, CallContext("s"), None)
            assert isinstance(answer, Outcome) and answer.data == {"status": "success", "i": i}

        await asyncio.gather(*(call(i) for i in range(32)))
        fds, rss = _fds(), _rss_mb()
        start = time.perf_counter()
        for chunk in range(0, 1000, 8):
            await asyncio.gather(*(call(i) for i in range(chunk, chunk + 8)))
        elapsed = time.perf_counter() - start
        grown = (_fds() - fds, _rss_mb() - rss)
        await runtime.aclose()
        return grown[0], grown[1], elapsed

    fd_growth, rss_growth, elapsed = asyncio.run(pool_soak())
    print(f"1,000 calls on a pool: {elapsed:.2f} s; open fds grew by {fd_growth}; "
          f"RSS grew by {rss_growth:.1f} MB")  # fmt: skip
    print(f"\n{'chaos case (deadline 500 ms)':<28} {'mode':<11} {'result':<24} "
          f"{'answered':>9} {'tree gone':>10}")  # fmt: skip
    for name, code in CHAOS.items():
        for mode in ("persistent", "oneshot"):
            marker = os.urandom(6).hex()
            one = target(base / f"chaos-{len(name)}-{mode}", mode=mode, timeout_ms=500,
                         code=code, env={"BENCH_MARKER": marker})  # fmt: skip

            async def go(one: Target = one) -> Outcome:
                runtime = SubprocessPluginRuntime(describe=False)
                answer = await runtime.invoke(
                    one, one.descriptor.operations[0], {}, CallContext("c"), None
                )
                assert isinstance(answer, Outcome)
                return answer

            start = time.perf_counter()
            outcome = asyncio.run(go())
            answered = time.perf_counter() - start
            while _marked(marker) and time.perf_counter() - start < answered + 2.0:
                time.sleep(0.01)
            gone = time.perf_counter() - start
            left = len(_marked(marker))
            code_ = outcome.error.code if outcome.error else outcome.status
            print(f"{name:<28} {mode:<11} {code_:<24} {answered * 1000:>6.0f} ms "
                  f"{gone * 1000:>7.0f} ms{'' if not left else f' ({left} LEFT)'}")  # fmt: skip


def _marked(marker: str) -> list[int]:
    needle = f"BENCH_MARKER={marker}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if needle in Path(entry.path, "environ").read_bytes():
                    state = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                    if state != b"Z":
                        found.append(int(entry.name))
            except OSError:
                pass
    return found


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soak", action="store_true", help="the fd/memory soak and chaos cases")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="plugyard-bench-"))
    base.chmod(0o755)
    try:
        if args.soak:
            soak(base)
        else:
            table(base, args.calls)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
