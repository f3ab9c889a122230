"""The Ray backend: heavy operations run as Ray tasks, through the executor's whole path
on the worker, on a Ray instance on loopback (one per session: ``ray_local``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.errors import PlugyardError
from plugyard.execution.backend import BackendSpec
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.runtimes.base import CallContext
from plugyard.types import Caller
from plugyard.yard import Settings, Yard

PLUGINS = Path(__file__).parent / "ray_plugins"
POLICY = """\
version: 1
subjects:
  bob: {roles: [user]}
  eve: {roles: [user]}
  carol: {roles: [clerk]}
  alice: {roles: [admin]}
grants:
  - {to: "role:user", plugin: ray-probe, effect: allow}
  - {to: "subject:eve", plugin: ray-probe, operation: where, effect: deny}
  - {to: "role:clerk", plugin: ray-probe, operation: count, effect: allow_with_approval}
  - {to: "role:admin", plugin: "*", verb: approve, effect: allow}
"""


@pytest.fixture
def yard(tmp_path: Path, ray_local: None) -> Iterator[Yard]:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = Settings(database=str(tmp_path / "yard.db"), builtins=False,
                        plugin_dirs=(PLUGINS,), policy_file=policy,
                        execution="ray:local")  # fmt: skip
    with Yard.from_settings(settings) as opened:
        yield opened


def audited(yard: Yard, request_id: str | None) -> list[tuple[object, ...]]:
    assert yard.governance is not None
    return [
        (r.subject, r.plugin_id, r.operation, r.decision, r.status, r.error_code)
        for r in yard.governance.audit.tail(1000)
        if r.request_id == request_id
    ]


def test_a_heavy_operation_runs_on_a_worker_and_a_light_one_here(yard: Yard) -> None:
    async def scenario() -> None:
        heavy = await yard.call("ray-probe", "where", {"value": [1, 2]}, subject="bob")
        light = await yard.call("ray-probe", "here", {"value": 3}, subject="bob")
        assert heavy.ok and heavy.data["value"] == [1, 2]
        assert heavy.data["pid"] != os.getpid()
        assert light.ok and light.data["pid"] == os.getpid()
        # The worker wrote its event into the same chain, once.
        assert audited(yard, heavy.request_id) == [
            ("bob", "ray-probe", "where", "allow", "success", None)
        ]
        assert yard.governance is not None and yard.governance.audit.verify().ok

    asyncio.run(scenario())


def test_a_heavy_operation_denied_by_policy_is_denied_on_the_worker_and_audited(
    yard: Yard,
) -> None:
    async def scenario() -> None:
        denied = await yard.call("ray-probe", "where", {"value": 1}, subject="eve")
        assert denied.error is not None and denied.error.code == "permission_denied"
        assert denied.plugin_id == "ray-probe" and denied.request_id is not None
        # One event, the worker's: the caller's side made no decision of its own.
        assert audited(yard, denied.request_id) == [
            ("eve", "ray-probe", "where", "deny", "error", "permission_denied")
        ]

    asyncio.run(scenario())


def test_one_idempotency_key_split_over_ray_tasks_has_one_effect(
    yard: Yard, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"

    def request() -> CallRequest:
        context = CallContext(request_id=new_request_id(), subject="bob", idempotency_key="k1")
        return CallRequest("ray-probe", "count", {"path": str(effects)}, context)

    async def scenario() -> list[Result]:
        return await asyncio.gather(*(yard.executor.call(request()) for _ in range(6)))

    results = asyncio.run(scenario())
    assert len(effects.read_text().splitlines()) == 1
    assert any(r.ok for r in results)
    assert {r.data["pid"] for r in results if r.ok} != {os.getpid()}


def test_one_approval_receipt_redeemed_by_several_ray_tasks_runs_once(
    yard: Yard, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"

    def request(receipt: str | None = None) -> CallRequest:
        context = CallContext(request_id=new_request_id(), subject="carol")
        return CallRequest("ray-probe", "count", {"path": str(effects)}, context,
                           approval_receipt=receipt)  # fmt: skip

    asked = asyncio.run(yard.executor.call(request()))
    assert asked.status == "pending_approval" and not effects.exists()
    yard.admin.decide(asked.data["action_id"], Caller("alice", ("admin",)), True)

    async def redeem() -> list[Result]:
        receipt = asked.data["receipt"]
        return await asyncio.gather(*(yard.executor.call(request(receipt)) for _ in range(4)))

    results = asyncio.run(redeem())
    assert len(effects.read_text().splitlines()) == 1
    assert [r.status for r in results].count("success") == 1
    assert {r.error.code for r in results if r.error is not None} == {"receipt_used"}


def test_cancelling_a_heavy_call_reaches_its_ray_task(yard: Yard) -> None:
    async def scenario() -> None:
        connected: asyncio.Queue[asyncio.StreamReader] = asyncio.Queue()

        async def accept(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
            await connected.put(reader)

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            call = asyncio.create_task(
                yard.call("ray-probe", "hold", {"port": port}, subject="bob")
            )
            arrived = asyncio.create_task(connected.get())
            async with asyncio.timeout(60):
                await asyncio.wait({call, arrived}, return_when=asyncio.FIRST_COMPLETED)
                assert not call.done(), call.result()  # the task runs on the worker
                reader = arrived.result()
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                assert await reader.read() == b""  # the worker's call was cancelled: it let go
        events = [e for e in yard.governance.audit.tail(50) if e.operation == "hold"]  # type: ignore[union-attr]
        assert [(e.status, e.error_code) for e in events] == [("error", "cancelled")]

    asyncio.run(scenario())


def test_a_heavy_calls_deadline_holds_on_the_worker(yard: Yard) -> None:
    async def scenario() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            result = await yard.call(
                "ray-probe", "hold", {"port": port}, subject="bob", timeout_ms=300
            )
        assert result.status == "timeout" and result.error is not None
        assert result.error.code == "timeout"
        assert audited(yard, result.request_id)[0][4:] == ("timeout", "timeout")

    asyncio.run(scenario())


def test_a_worker_dying_under_a_call_answers_worker_lost_once(yard: Yard) -> None:
    result = asyncio.run(yard.call("ray-probe", "die", subject="bob"))
    assert result.error is not None and result.error.code == "worker_lost"
    # Not run again (a call runs at most once), and audited by the caller's side.
    assert audited(yard, result.request_id) == [
        ("bob", "ray-probe", "die", "none", "error", "worker_lost")
    ]
    after = asyncio.run(yard.call("ray-probe", "where", {"value": 1}, subject="bob"))
    assert after.ok  # Ray replaced the worker


def test_the_setting_names_local_ray_local_or_a_ray_address() -> None:
    assert not BackendSpec.parse(None).remote
    assert BackendSpec.parse("ray:local") == BackendSpec("ray", "local")
    assert BackendSpec.parse("ray://10.0.0.5:10001") == BackendSpec("ray", "10.0.0.5:10001")
    for bad in ("ray", "ray://host", "ray://host:0", "dask://x:1", "ray://:10001"):
        with pytest.raises(PlugyardError) as caught:
            BackendSpec.parse(bad)
        assert caught.value.code == "execution_backend_unavailable"


def test_an_unreachable_cluster_fails_fast_with_its_code(tmp_path: Path) -> None:
    """A refused port and a port that accepts but never answers: both calls answer
    ``execution_backend_unavailable`` within the connect timeout, and are audited. In a
    process of its own: a process has one Ray connection, and the session holds one."""
    script = textwrap.dedent(
        f"""
        import asyncio, socket, time
        from pathlib import Path
        from plugyard.yard import Settings, Yard

        closed = socket.socket(); closed.bind(("127.0.0.1", 0))
        refused = closed.getsockname()[1]; closed.close()
        silent = socket.socket(); silent.bind(("127.0.0.1", 0)); silent.listen(8)

        async def main():
            for port in (refused, silent.getsockname()[1]):
                settings = Settings(database=str(Path({str(tmp_path)!r}) / f"{{port}}.db"),
                                    builtins=False, plugin_dirs=(Path({str(PLUGINS)!r}),),
                                    execution=f"ray://127.0.0.1:{{port}}",
                                    execution_connect_timeout_s=2.0)
                with Yard.from_settings(settings) as yard:
                    started = time.monotonic()
                    result = await yard.call("ray-probe", "where", {{}})
                    took = time.monotonic() - started
                    events = [e.error_code for e in yard.governance.audit.tail(5)
                              if e.request_id == result.request_id]
                    print(result.error.code, took < 5, events)

        asyncio.run(main())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=os.environ)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    expected = "execution_backend_unavailable True ['execution_backend_unavailable']"
    assert lines == [expected, expected]


def test_an_in_memory_database_cannot_reach_workers() -> None:
    with Yard.from_settings(Settings(database=":memory:", execution="ray:local")) as yard:
        with pytest.raises(PlugyardError) as caught:
            _ = yard.backend
        assert caught.value.code == "execution_backend_unavailable"
