"""What a killed install, upgrade or removal leaves behind is cleared, and only that."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plugyard.registry.packages import Installer

from .test_installer import leftovers
from .zips import build, shu_files


@pytest.fixture
def installer(tmp_path: Path) -> Installer:
    return Installer(tmp_path / "packages")


def test_a_killed_install_is_swept_and_a_live_one_is_not(installer: Installer) -> None:
    archive = installer.root.parent / "greeter.zip"
    archive.write_bytes(build(shu_files()))
    # The child stops inside install(), after extraction, in the operator's vet hook.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from plugyard.registry.packages import Installer
            def vet(name, plugins):
                print("vetting", flush=True)
                sys.stdin.readline()
            Installer(Path({str(installer.root)!r})).install(Path({str(archive)!r}), vet=vet)
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "vetting"
        in_progress = leftovers(installer)
        assert len(in_progress) == 2  # the staging folder and its lock file
        assert installer.sweep() == 0
        assert leftovers(installer) == in_progress
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert installer.sweep() == 1
    assert leftovers(installer) == []
    assert installer.install(build(shu_files())).name == "greeter"


def test_a_held_staging_lock_is_respected_in_process_too(installer: Installer) -> None:
    installer.root.mkdir(parents=True)
    staging = installer.root / ".staging-abc"
    (staging / "files").mkdir(parents=True)
    lock = installer.root / ".staging-abc.lock"
    lock.touch()
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert installer.sweep() == 0
        assert staging.is_dir()
    finally:
        os.close(fd)
    assert installer.sweep() == 1
    assert leftovers(installer) == []


def test_a_staging_folder_without_its_lock_file_is_removed(installer: Installer) -> None:
    (installer.root / ".staging-old" / "files").mkdir(parents=True)
    assert installer.sweep() == 1
    assert leftovers(installer) == []


def test_an_upgrade_killed_between_its_renames_is_rolled_back(installer: Installer) -> None:
    installer.install(build(shu_files(**{"old.txt": "old"})))
    # The state right after the old version was moved aside, before the new one moved in.
    aside = installer.root / ".replaced-xyz"
    aside.mkdir()
    os.rename(installer.root / "greeter", aside / "old")
    assert installer.installed() == []
    assert installer.sweep() == 1
    assert leftovers(installer) == ["greeter"]
    assert (installer.get("greeter").files / "old.txt").read_text() == "old"


def test_a_replaced_version_is_dropped_when_the_new_one_is_in_place(
    installer: Installer,
) -> None:
    installer.install(build(shu_files(**{"new.txt": "new"})))
    aside = installer.root / ".replaced-xyz"
    shutil.copytree(installer.root / "greeter", aside / "old")
    record = json.loads((aside / "old" / "install.json").read_text())
    assert record["name"] == "greeter"
    assert installer.sweep() == 1
    assert leftovers(installer) == ["greeter"]
    assert (installer.get("greeter").files / "new.txt").is_file()


def test_a_killed_removal_finishes(installer: Installer) -> None:
    installer.install(build(shu_files()))
    aside = installer.root / ".removed-xyz"
    aside.mkdir()
    os.rename(installer.root / "greeter", aside / "old")
    assert installer.sweep() == 1
    assert leftovers(installer) == []


def test_sweeping_a_missing_or_clean_root_does_nothing(installer: Installer) -> None:
    assert installer.sweep() == 0
    installer.install(build(shu_files()))
    assert installer.sweep() == 0
    assert leftovers(installer) == ["greeter"]
