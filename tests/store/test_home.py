"""The data folder: one per user, whatever the working folder, and never the real one in
a test (every test has a PLUGYARD_HOME of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.store import urls
from plugyard.store.home import data_home, default_store, legacy_notice


def test_plugyard_home_comes_first(tmp_path: Path) -> None:
    env = {"PLUGYARD_HOME": str(tmp_path / "mine"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert data_home(env) == tmp_path / "mine"
    assert default_store(env) == tmp_path / "mine" / "plugyard.db"


def test_then_the_xdg_data_folder(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    assert data_home(env, "linux") == tmp_path / "xdg" / "plugyard"
    assert data_home(env, "darwin") == tmp_path / "xdg" / "plugyard"  # set: a choice


def test_a_relative_xdg_data_folder_is_ignored_as_the_spec_says(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": "relative/share", "HOME": str(tmp_path)}
    assert data_home(env, "linux") == tmp_path / ".local" / "share" / "plugyard"


def test_else_each_systems_own_place_under_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert data_home(env, "linux") == tmp_path / ".local" / "share" / "plugyard"
    assert data_home(env, "darwin") == tmp_path / "Library" / "Application Support" / "plugyard"
    windows = {**env, "LOCALAPPDATA": str(tmp_path / "AppData" / "Local")}
    assert data_home(windows, "win32") == tmp_path / "AppData" / "Local" / "plugyard"


def test_the_fake_home_of_a_process_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLUGYARD_HOME")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_home(platform="linux") == tmp_path / ".local" / "share" / "plugyard"


def test_a_store_of_the_old_default_gets_a_notice_unless_it_is_the_one_in_use(
    tmp_path: Path,
) -> None:
    store = tmp_path / "home" / "plugyard.db"
    assert legacy_notice(store, cwd=tmp_path) is None
    old = tmp_path / ".plugyard" / "plugyard.db"
    old.parent.mkdir()
    old.write_bytes(b"")
    notice = legacy_notice(store, cwd=tmp_path)
    assert notice is not None and "\n" not in notice
    assert str(store) in notice and "--db .plugyard/plugyard.db" in notice
    assert legacy_notice(old, cwd=tmp_path) is None  # chosen with --db: nothing to say


def test_the_data_folder_is_made_for_its_user_alone(tmp_path: Path) -> None:
    urls.from_environment({"PLUGYARD_HOME": str(tmp_path / "home")})
    assert (tmp_path / "home").stat().st_mode & 0o777 == 0o700
