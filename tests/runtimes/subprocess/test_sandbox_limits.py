"""Each sandbox has its own process and memory budget: a fork bomb or a memory hog in one
plugin's sandbox stops there, what its calls leave running is killed once its worker is
idle, and nothing of it outlives the runtime — with a cgroup per sandbox, and with the
fallback (a uid per sandbox) when cgroups are turned off."""

from __future__ import annotations

import asyncio
import os
import subprocess
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.sandbox import SandboxLimits, unavailable_reason
from plugyard.runtimes.sandbox.detect import detect
from plugyard.runtimes.sandbox.uids import in_use
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, SubprocessSettings
from plugyard.runtimes.subprocess.sandboxed import SandboxedTree
from runtimes.subprocess.helpers import chaos_target, marked, none_left, pyworker_target, until

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason="no bubblewrap here")
NO_GROUPS = detect() is None
MODES = [
    pytest.param(True, id="cgroup", marks=pytest.mark.skipif(NO_GROUPS, reason="no cgroup")),
    pytest.param(False, id="uid", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="without root, the fallback is shared by all sandboxes")),
]  # fmt: skip

BOMBER = """
    import asyncio, os, time

    async def hold():
        await asyncio.sleep(60)

    def bomb():
        forked = 0
        while True:
            try:
                pid = os.fork()
            except OSError:
                return {"forked": forked}
            if pid:
                forked += 1
                continue
            try:
                while True:  # every child forks on, and so does every grandchild
                    os.fork()
            except OSError:
                time.sleep(600)
            os._exit(0)
"""
VICTIM = """
    def ping():
        return "pong"
"""
HOG = """
    import os, select

    def hog(count=4, mb=96):
        # each child holds its memory until every one has it or died for it
        release_r, release_w = os.pipe()
        report_r, report_w = os.pipe()
        kids = []
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                os.close(release_w)
                with open("/proc/self/oom_score_adj", "w") as adj:
                    adj.write("1000")  # the kernel picks these first, not the worker
                block = bytearray(mb << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(report_w, b"1")
                os.read(release_r, 1)
                os._exit(0)
            kids.append(pid)
        os.close(release_r)
        os.close(report_w)
        held, ended = 0, set()
        while held + len(ended) < count:
            if select.select([report_r], [], [], 0.05)[0]:
                held += len(os.read(report_r, 16))
            for pid in kids:
                if pid not in ended and os.waitpid(pid, os.WNOHANG)[0]:
                    ended.add(pid)
        os.close(release_w)
        for pid in set(kids) - ended:
            os.waitpid(pid, 0)
        return {"held": held}

    def swell():
        block = bytearray(300 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        return len(block)
"""


def _plugin(folder: Path, code: str, *ops: str) -> Target:
    folder.mkdir(parents=True)
    caps = "".join(f"  - {{id: {op}, description: Does {op}.}}\n" for op in ops)
    (folder / "plugin.yaml").write_text(
        f"id: {folder.name}\nname: {folder.name}\ndescription: A test plugin.\n"
        f"config: {{workers: 1}}\ncapabilities:\n{caps}"
    )
    (folder / "plugin.py").write_text(textwrap.dedent(code))
    return pyworker_target(folder, "untrusted")


async def _call(runtime: SubprocessPluginRuntime, target: Target, op_id: str) -> Outcome:
    op = next(o for o in target.descriptor.operations if o.id == op_id)
    answer = await runtime.invoke(target, op, {}, CallContext(op_id), None)
    assert isinstance(answer, Outcome)
    return answer


def _tree(runtime: SubprocessPluginRuntime, target: Target) -> SandboxedTree:
    [pool] = [p for k, p in runtime._pools.items() if k[0] == target.descriptor.id]
    [worker] = pool.workers
    assert worker.sandbox is not None
    return worker.sandbox


def _processes(tree: SandboxedTree) -> set[int]:
    """The live processes of a sandbox: those of its own uid, else of its group."""
    uid = tree.confinement.uid
    if uid is None:
        assert tree.confinement.group is not None
        return tree.confinement.group.pids()
    found = set()
    for entry in os.scandir("/proc"):
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            found.add(int(entry.name))
    return found


def _run(
    settings: SubprocessSettings, test: Callable[[SubprocessPluginRuntime], Awaitable[Any]]
) -> Any:
    async def go() -> Any:
        runtime = SubprocessPluginRuntime(settings)
        try:
            return await test(runtime)
        finally:
            await runtime.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("cgroups", MODES)
def test_a_fork_bomb_in_one_sandbox_leaves_other_sandboxed_plugins_working(
    tmp_path: Path, cgroups: bool
) -> None:
    bomber = _plugin(tmp_path / "bomber", BOMBER, "hold", "bomb")
    victim = _plugin(tmp_path / "victim", VICTIM, "ping")
    settings = SubprocessSettings(limits=SandboxLimits(processes=24), cgroups=cgroups)

    async def test(runtime: SubprocessPluginRuntime) -> list[Any]:
        holding = asyncio.ensure_future(_call(runtime, bomber, "hold"))  # keeps it busy
        await until(lambda: any(p.workers for p in runtime._pools.values()), 5.0)
        bombed = await _call(runtime, bomber, "bomb")
        tree = _tree(runtime, bomber)
        during = len(_processes(tree))
        # The bomb holds every slot of its sandbox; a new sandbox describes and answers.
        described = await asyncio.to_thread(runtime.check, victim)
        answered = await _call(runtime, victim, "ping")
        holding.cancel()  # the bomber's worker goes idle: what the bomb left is killed
        await asyncio.gather(holding, return_exceptions=True)
        await until(lambda: len(_processes(tree)) <= 1, 5.0)
        return [bombed, during, described, answered, tree]

    bombed, during, described, answered, tree = _run(settings, test)
    assert bombed.status == "success", bombed.error
    assert bombed.data["forked"] > 0
    assert during >= 12  # of 24 slots: bubblewrap has 2, the worker its threads
    assert described is None
    assert answered.data == "pong", answered.error
    assert _processes(tree) == set()
    group = tree.confinement.group
    assert group is None or not any(folder.exists() for folder in group.folders)


@pytest.mark.skipif(NO_GROUPS, reason="no cgroup on this host")
def test_a_memory_hog_spread_over_processes_is_stopped_by_the_sandbox_cap(
    tmp_path: Path,
) -> None:
    hog = _plugin(tmp_path / "hog", HOG, "hog", "swell")
    limits = SandboxLimits(total_memory_mb=192)  # each process may still map 1024 MB

    async def test(runtime: SubprocessPluginRuntime) -> list[Outcome]:
        return [await _call(runtime, hog, "hog"), await _call(runtime, hog, "swell")]

    spread, alone = _run(SubprocessSettings(limits=limits), test)
    assert spread.status == "success", spread.error
    assert spread.data["held"] < 4  # 4 x 96 MB never fit
    assert alone.error is not None  # the worker itself went over the cap
    assert alone.error.code == "worker_lost"
    assert alone.error.details["cause"] == "memory_cap"


@pytest.mark.parametrize("cgroups", MODES)
def test_what_a_call_leaves_running_is_killed_once_its_worker_is_idle(
    tmp_path: Path, cgroups: bool
) -> None:
    target, marker = chaos_target(tmp_path / "chaos", trust="untrusted")

    async def test(runtime: SubprocessPluginRuntime) -> list[Any]:
        op = target.descriptor.operations[0]
        # Back to back: the second one's daemon is left to the tidy due a moment later.
        left = [
            await runtime.invoke(target, op, {"do": "daemon_reply"}, CallContext(n), None)
            for n in ("1", "2")
        ]
        wrapper = _tree(runtime, target).core()
        await until(lambda: len(marked(marker)) == 1, 5.0)
        return [left[-1], wrapper, marked(marker)]

    left, core, after = _run(SubprocessSettings(cgroups=cgroups), test)
    assert left.data == "left one behind"
    assert set(after) <= core  # the wrapper lives on, the daemon it left does not
    assert none_left(marker)


def test_a_wrapper_that_keeps_zombies_is_retired_while_idle(tmp_path: Path) -> None:
    target, marker = chaos_target(tmp_path / "chaos", trust="untrusted")
    op = target.descriptor.operations[0]

    async def test(runtime: SubprocessPluginRuntime) -> list[Any]:
        await runtime.invoke(target, op, {"do": "zombie_reply"}, CallContext("z"), None)
        [pool] = runtime._pools.values()
        first = pool.workers[0]
        await until(lambda: not first.alive, 5.0)
        again = await runtime.invoke(target, op, {"do": "echo"}, CallContext("e"), None)
        return [first.broken, again, pool.workers[0] is not first]

    retired, again, replaced = _run(SubprocessSettings(), test)
    assert retired is not None
    assert retired.details["cause"] == "retired"
    assert again.status == "success"
    assert replaced
    assert none_left(marker)


@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids are given only as root")
def test_a_refused_spawn_is_tried_again_at_the_next_call(tmp_path: Path) -> None:
    target, _ = chaos_target(tmp_path / "chaos", trust="untrusted")
    op = target.descriptor.operations[0]
    uid = 0x70000000 + 4321
    # A leftover holds the one uid sandboxes may use here (as a killed plugyard's would).
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "60"]
    squatter = subprocess.Popen(argv)

    async def test(runtime: SubprocessPluginRuntime) -> list[Outcome]:
        await until(lambda: uid in in_use(), 5.0)
        refused = await runtime.invoke(target, op, {"do": "echo"}, CallContext("r"), None)
        squatter.kill()
        squatter.wait()
        again = await runtime.invoke(target, op, {"do": "echo"}, CallContext("a"), None)
        assert isinstance(refused, Outcome) and isinstance(again, Outcome)
        return [refused, again]

    try:
        refused, again = _run(SubprocessSettings(sandbox_uids=range(uid, uid + 1)), test)
    finally:
        squatter.kill()
        squatter.wait()
    assert refused.error is not None
    assert refused.error.code == "plugin_unavailable"
    assert again.status == "success", again.error
