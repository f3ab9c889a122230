"""Finding where sandbox groups can be made (against fake cgroup trees), and, on this
host, a group that caps a sandbox's processes and leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugyard.runtimes.sandbox import SandboxLimits, confine, mechanism, sandboxed
from plugyard.runtimes.sandbox import uids as sandbox_uids
from plugyard.runtimes.sandbox.cgroups import Group
from plugyard.runtimes.sandbox.detect import candidates, detect
from plugyard.runtimes.sandbox.uids import lease, release

HOST_GROUPS = detect()
PID = 4242


def _fake(tmp_path: Path, mounts: list[str], own: list[str]) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text("".join(f"{n} 1 0:{n} {m}\n" for n, m in enumerate(mounts)))
    (proc / "cgroup").write_text("".join(f"{line}\n" for line in own))
    return proc


def _v2_group(folder: Path, controllers: str, subtree: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cgroup.controllers").write_text(controllers)
    (folder / "cgroup.subtree_control").write_text(subtree)
    return folder


def test_a_cgroup2_group_with_pids_and_memory_for_its_children_is_chosen(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    mine = _v2_group(root / "app", "cpu pids memory", "pids memory")
    proc = _fake(tmp_path, [f"/ {root} rw - cgroup2 cgroup2 rw"], ["0::/app"])
    [found] = candidates(proc, PID)
    assert (found.kind, found.pids, found.memory) == ("cgroup2", mine, mine)


def test_a_delegated_parent_serves_when_plugyard_sits_in_a_leaf_of_it(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    service = _v2_group(root / "svc", "pids memory", "pids memory")
    main = service / "main"  # ours: it holds us, so the kernel refuses it controllers
    main.mkdir()
    (main / "cgroup.controllers").write_text("pids memory")
    (main / "cgroup.subtree_control").mkdir()  # a write to it fails, as EBUSY would
    proc = _fake(tmp_path, [f"/ {root} rw - cgroup2 cgroup2 rw"], ["0::/svc/main"])
    [found] = candidates(proc, PID)
    assert found.pids == service


def test_cgroup2_without_the_controllers_falls_back_to_cgroup1(tmp_path: Path) -> None:
    # The hybrid layout: v2 mounted with no controller, v1 hierarchies writable.
    unified = _v2_group(tmp_path / "unified", "")
    pids, memory = tmp_path / "pids", tmp_path / "memory" / "box"
    for folder in (pids, memory):
        folder.mkdir(parents=True)
        (folder / "cgroup.procs").write_text(f"1\n{PID}\n")
    proc = _fake(
        tmp_path,
        [f"/ {unified} rw - cgroup2 cgroup2 rw",
         f"/ {pids} rw - cgroup cgroup rw,pids",
         f"/ {tmp_path / 'memory'} rw - cgroup cgroup rw,memory"],
        ["5:pids:/", "4:memory:/box", "0::/"],
    )  # fmt: skip
    [found] = candidates(proc, PID)
    assert (found.kind, found.pids, found.memory) == ("cgroup1", pids, memory)


def test_a_cgroup1_folder_that_does_not_hold_us_is_not_used(tmp_path: Path) -> None:
    # Seen through another cgroup namespace, our path can name someone else's group.
    for name in ("pids", "memory"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cgroup.procs").write_text("1\n")
    proc = _fake(
        tmp_path,
        [f"/ {tmp_path / 'pids'} rw - cgroup cgroup rw,pids",
         f"/ {tmp_path / 'memory'} rw - cgroup cgroup rw,memory"],
        ["5:pids:/", "4:memory:/"],
    )  # fmt: skip
    assert candidates(proc, PID) == []


def test_without_a_cgroup_mount_nothing_is_offered(tmp_path: Path) -> None:
    proc = _fake(tmp_path, ["/ /proc rw - proc proc rw"], ["0::/"])
    assert candidates(proc, PID) == []
    assert "no cgroup" in mechanism(cgroups=False)


def test_sandbox_uids_are_never_one_a_process_runs_as(tmp_path: Path) -> None:
    first, second = lease(), lease()
    try:
        assert first != second
        assert {first, second} <= set(sandbox_uids.UIDS)
    finally:
        release(first)
        release(second)
    with pytest.raises(OSError, match="no free sandbox uid"):
        lease(range(os.getuid(), os.getuid() + 1))  # we run as it


@pytest.mark.skipif(HOST_GROUPS is None, reason="no writable cgroup on this host")
def test_a_group_caps_the_processes_of_its_sandbox_and_goes_with_them(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    code = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 64:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(600)\n"
        "        n += 1\n"
        "except OSError:\n"
        "    pass\n"
        "print(n, os.getuid(), flush=True)\n"
        "time.sleep(600)\n"
    )
    confinement = confine(SandboxLimits(processes=12))
    group = confinement.group
    assert isinstance(group, Group)
    argv = sandboxed([sys.executable, "-I", "-S", "-c", code], folder=str(tmp_path),
                     env={"PATH": "/usr/bin"}, confinement=confinement)  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        forked, uid = map(int, proc.stdout.readline().split())
        assert 0 < forked < 12
        if confinement.uid is not None:
            assert uid == confinement.uid
        assert len(group.pids()) == forked + 3  # bubblewrap, its init and the program
    finally:
        assert confinement.release()
        proc.wait(timeout=5)
    assert not any(folder.exists() for folder in group.folders)
    assert group.pids() == set()
