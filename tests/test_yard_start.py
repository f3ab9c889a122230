"""A yard's start: only what changed is read and checked, only what is used is built, and
the store is the user's, whatever the working folder."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from plugyard.deferred import DeferredRuntime, built
from plugyard.registry import fingerprint
from plugyard.store.home import data_home
from plugyard.yard import Settings, Yard, packages_root

CODE = """\
from pathlib import Path

# Each import leaves a line, outside the plugin's folder (a file written inside it would
# be a change of the folder): the test counts how often the code loaded.
with open(Path(__file__).parents[3] / "imports.log", "a") as log:
    log.write("imported\\n")


def greet(name: str) -> dict:
    return {{"text": "{greeting}, " + name}}
"""
MANIFEST = """\
id: greeter
name: Greeter
description: Greets someone by name.
capabilities:
  - id: greet
    description: Say hello.
    parameters:
      - {name: name, type: string, description: Who.}
"""


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test just wrote count as settled (the settling rule has its own tests)."""
    monkeypatch.setattr(fingerprint, "SETTLE_NS", 0)


@pytest.fixture
def greeter(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins" / "tool" / "greeter"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(MANIFEST)
    (folder / "plugin.py").write_text(CODE.format(greeting="Hello"))
    return folder


def settings(tmp_path: Path) -> Settings:
    return Settings(database=str(tmp_path / "yard.db"), plugin_dirs=(tmp_path / "plugins",))


def imports(folder: Path) -> int:
    log = folder.parents[2] / "imports.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def greet(yard: Yard) -> str:
    result = asyncio.run(yard.call("greeter", "greet", {"name": "Ada"}))
    assert result.ok, result.error
    return str(result.data["text"])


@pytest.mark.usefixtures("settled")
def test_a_restart_neither_reads_nor_imports_an_unchanged_plugin(
    tmp_path: Path, greeter: Path
) -> None:
    with Yard.from_settings(settings(tmp_path)) as first:
        assert imports(greeter) == 1  # checked (and refined) before it was registered
        registered = first.registry.find("greeter")
    with Yard.from_settings(settings(tmp_path)) as second:
        assert "greeter" in second.report.unchanged
        assert second.report.events == ()
        assert second.registry.find("greeter") == registered
        assert imports(greeter) == 1
        assert greet(second) == "Hello, Ada"  # the code loads at its first call
    assert len(second.report.unchanged) == len(second.report.loaded)  # built-ins too


@pytest.mark.usefixtures("settled")
def test_edited_code_is_checked_and_called_at_the_next_start(tmp_path: Path, greeter: Path) -> None:
    with Yard.from_settings(settings(tmp_path)):
        pass
    (greeter / "plugin.py").write_text(CODE.format(greeting="Good morning"))
    with Yard.from_settings(settings(tmp_path)) as yard:
        assert "greeter" not in yard.report.unchanged
        assert greet(yard) == "Good morning, Ada"


@pytest.mark.usefixtures("settled")
def test_a_plugin_whose_code_broke_is_unavailable_and_recovers_when_fixed(
    tmp_path: Path, greeter: Path
) -> None:
    (greeter / "plugin.py").write_text("raise ImportError('a library is missing')\n")
    for _ in range(2):  # not remembered: checked again at every start
        with Yard.from_settings(settings(tmp_path)) as yard:
            plugin = yard.registry.find("greeter")
            assert plugin is not None and not plugin.available
            assert "greeter" not in yard.report.unchanged
    (greeter / "plugin.py").write_text(CODE.format(greeting="Hi"))
    with Yard.from_settings(settings(tmp_path)) as yard:
        assert greet(yard) == "Hi, Ada"


def test_a_yard_builds_what_it_uses_when_it_is_first_used(tmp_path: Path) -> None:
    with Yard.from_settings(Settings(database=str(tmp_path / "yard.db"))) as yard:
        deferred = [r for r in yard.runtimes.lazy.values() if isinstance(r, DeferredRuntime)]
        assert sorted(r.kind for r in deferred) == ["http", "mcp", "subprocess"]
        assert all(r.built is None for r in deferred)  # no bundled plugin needs them
        for part in ("executor", "governance", "policy", "outbound", "discovery", "health"):
            assert built(yard, part) is None, part
        result = asyncio.run(yard.call("calculator", params={"expression": "6*7"}))
        assert result.ok and result.data["result"] == 42
        assert built(yard, "executor") is yard.executor
        assert yard.governance is not None and yard.policy is not None
        assert all(r.built is None for r in deferred)
        assert yard.mcp_tool_pins() == []  # builds the MCP runtime, and only it
        assert [r.kind for r in deferred if r.built is not None] == ["mcp"]


def test_the_default_store_and_packages_are_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLUGYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLUGYARD_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    with Yard.from_settings(Settings(builtins=False)) as yard:
        assert yard.store.url == f"sqlite:///{tmp_path / 'home' / 'plugyard.db'}"
        assert packages_root(yard.settings) == tmp_path / "home" / "packages"
    assert not (tmp_path / ".plugyard").exists()
    server = Settings(database="postgresql://u@db.example/yard")
    assert packages_root(server) == data_home() / "packages"


def test_a_store_of_the_old_default_is_left_alone_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    old = tmp_path / ".plugyard" / "plugyard.db"
    old.parent.mkdir()
    old.write_bytes(b"")
    monkeypatch.setenv("PLUGYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLUGYARD_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.WARNING, "plugyard.store"):
        Yard.from_settings(Settings(builtins=False)).close()
    notices = [r.getMessage() for r in caplog.records if ".plugyard" in r.getMessage()]
    assert len(notices) == 1
    assert "--db .plugyard/plugyard.db" in notices[0]
    assert str(tmp_path / "home" / "plugyard.db") in notices[0]
    assert old.read_bytes() == b""
