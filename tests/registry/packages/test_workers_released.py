"""Removing or upgrading a package stops its workers at once — none lives on until the
host shuts down with the old files — even when the removal runs on another thread than
the calls (as the REST route's does)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.runtimes.base import Outcome
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from plugyard.yard import Settings, Yard

from .zips import SHU_PLUGIN, build, shu_files

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason="no bubblewrap here")


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    with Yard.from_settings(Settings(database=str(tmp_path / "y.db"), governed=False)) as opened:
        yield opened


def _worker_pids(yard: Yard) -> set[int]:
    runtime = yard.runtimes["subprocess"]
    assert isinstance(runtime, SubprocessPluginRuntime)
    return {w.proc.pid for p in runtime._pools.values() for w in p.workers if w.proc}


def _gone(pid: int) -> bool:
    """Dead, or a zombie its parent has not collected yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rsplit(b")", 1)[1].split()[0] == b"Z"


async def _until_gone(pids: set[int]) -> bool:
    deadline = asyncio.get_running_loop().time() + 2
    while not all(_gone(pid) for pid in pids):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _greet(yard: Yard) -> Outcome:
    result = await yard.call("greeter", "execute", {"name": "ada"})
    assert result.status == "success", result.error
    return result  # type: ignore[return-value]


def test_removing_a_package_stops_its_worker_at_once(yard: Yard) -> None:
    async def go() -> tuple[set[int], bool]:
        yard.packages.install(build(shu_files()))
        await _greet(yard)
        pids = _worker_pids(yard)
        await asyncio.to_thread(yard.packages.remove, "greeter")
        return pids, await _until_gone(pids)

    pids, gone = asyncio.run(go())
    assert len(pids) == 1
    assert gone


def test_upgrading_a_package_replaces_its_worker_and_its_code(yard: Yard) -> None:
    newer = shu_files(**{"greeter_pkg/plugin.py": SHU_PLUGIN.replace('"hello "', '"ciao "')})

    async def go() -> tuple[set[int], bool, object, set[int]]:
        yard.packages.install(build(shu_files()))
        await _greet(yard)
        old = _worker_pids(yard)
        await asyncio.to_thread(yard.packages.install, build(newer))
        gone = await _until_gone(old)
        result = await _greet(yard)
        return old, gone, result.data, _worker_pids(yard)

    old, gone, data, new = asyncio.run(go())
    assert gone
    assert data == {"greeting": "ciao ada"}
    assert new and not new & old
