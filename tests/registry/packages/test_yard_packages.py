"""Packages in a running yard: where their code runs, registration beside the other
sources, restarts, removal, and calls — in-process when trusted, in the sandboxed worker
when not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import PackageError, PlugyardError
from plugyard.manifest.model import PythonRuntime, SubprocessRuntime
from plugyard.registry.packages import PackageSource
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.yard import Settings, Yard, packages_root

from .zips import build, shu_files

TWO_PLUGINS = """
name: pair
version: 1.0.0
entrypoints:
  pair-one: greeter_pkg.plugin:Plugin
  pair-two: greeter_pkg.plugin:Plugin
"""


def settings(tmp_path: Path) -> Settings:
    return Settings(database=str(tmp_path / "y.db"), governed=False)


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    with Yard.from_settings(settings(tmp_path)) as opened:
        yield opened


def call(yard: Yard, plugin_id: str, params: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        try:
            return (await yard.call(plugin_id, "execute", params)).to_dict()
        finally:
            closer = getattr(yard.runtimes.get("subprocess"), "aclose", None)
            if closer is not None:
                await closer()

    return asyncio.run(run())


def test_a_yard_clears_what_a_killed_install_left_on_first_use(tmp_path: Path) -> None:
    stale = tmp_path / "packages" / ".staging-killed"
    (stale / "files").mkdir(parents=True)
    with Yard.from_settings(settings(tmp_path)) as opened:
        assert opened.packages.installed() == []
        assert not stale.exists()


def test_the_packages_root_sits_beside_the_store_file(tmp_path: Path) -> None:
    assert packages_root(Settings(database=str(tmp_path / "a.db"))) == tmp_path / "packages"
    assert packages_root(Settings(database=f"sqlite:///{tmp_path}/a.db")) == tmp_path / "packages"
    assert packages_root(Settings(database=":memory:")) is None
    assert packages_root(Settings(database=":memory:", packages_dir=tmp_path)) == tmp_path
    env = Settings.from_env({"PLUGYARD_PACKAGES_DIR": str(tmp_path / "p")})
    assert env.packages_dir == tmp_path / "p"


def test_an_untrusted_python_plugin_is_placed_on_the_sandboxed_worker(yard: Yard) -> None:
    done = yard.packages.install(build(shu_files()))
    plugin = yard.registry.require("greeter")
    runtime = plugin.descriptor.runtime
    assert isinstance(runtime, SubprocessRuntime)
    assert runtime.args[:4] == ("-I", "-S", "-m", "plugyard.runtimes.subprocess.pyworker")
    assert runtime.args[4:] == (str(done.package.files.resolve()), "greeter")
    assert plugin.trust == "untrusted"
    assert plugin.descriptor.config["mode"] == "persistent"


def test_a_trusted_package_without_vendor_runs_in_process(yard: Yard) -> None:
    yard.packages.install(build(shu_files()), trust="trusted")
    plugin = yard.registry.require("greeter")
    assert isinstance(plugin.descriptor.runtime, PythonRuntime)
    assert call(yard, "greeter", {"name": "ada"})["data"] == {"greeting": "hello ada"}


VENDORED_PLUGIN = """
import greeting_words

class Plugin:
    async def execute(self, params, context, host):
        return {"status": "success", "data": {"greeting": greeting_words.HELLO + params["name"]}}
"""


def vendored(canary: Path) -> dict[str, str]:
    return shu_files(**{
        "greeter_pkg/plugin.py": VENDORED_PLUGIN,
        "vendor/greeting_words.py": "HELLO = 'ciao '\n",
        "vendor/evil.pth": f"import pathlib; pathlib.Path({str(canary)!r}).touch()\n",
    })  # fmt: skip


def test_a_trusted_package_with_vendor_runs_in_its_own_worker(yard: Yard, tmp_path: Path) -> None:
    canary = tmp_path / "pth-ran"
    yard.packages.install(build(vendored(canary)), trust="trusted")
    plugin = yard.registry.require("greeter")
    assert isinstance(plugin.descriptor.runtime, SubprocessRuntime)
    assert plugin.trust == "trusted"
    result = call(yard, "greeter", {"name": "ada"})
    assert result["data"] == {"greeting": "ciao ada"}, result
    assert not canary.exists()  # the worker is not sandboxed: a run .pth would show
    assert "greeting_words" not in __import__("sys").modules


@pytest.mark.skipif(unavailable_reason() is not None, reason="no bubblewrap here")
def test_an_untrusted_package_answers_from_the_sandbox_with_its_vendored_code(
    yard: Yard, tmp_path: Path
) -> None:
    yard.packages.install(build(vendored(tmp_path / "pth-ran")))
    result = call(yard, "greeter", {"name": "ada"})
    assert result["status"] == "success", result
    assert result["data"] == {"greeting": "ciao ada"}


def test_a_multi_plugin_manifest_gives_each_plugin_its_worker(yard: Yard) -> None:
    done = yard.packages.install(build(shu_files(**{"manifest.yaml": TWO_PLUGINS})))
    assert done.package.plugins == ("pair-one", "pair-two")
    for plugin_id in done.package.plugins:
        runtime = yard.registry.require(plugin_id).descriptor.runtime
        assert isinstance(runtime, SubprocessRuntime)
        assert runtime.args[-1] == plugin_id


def test_installed_packages_survive_a_restart_with_their_trust(tmp_path: Path) -> None:
    with Yard.from_settings(settings(tmp_path)) as first:
        first.packages.install(build(shu_files()), trust="trusted")
    with Yard.from_settings(settings(tmp_path)) as second:
        plugin = second.registry.require("greeter")
        assert plugin.trust == "trusted"
        assert "greeter" in second.report.loaded
        assert [p.name for p in second.packages.installed()] == ["greeter"]
    source = PackageSource(tmp_path / "packages")
    assert [p.id for p in source.load().plugins] == ["greeter"]


def test_a_package_may_not_take_an_id_another_source_holds(yard: Yard) -> None:
    stolen = shu_files(**{"manifest.yaml": "name: calculator\nversion: 9.0.0\n"
                          "entrypoints: {calculator: greeter_pkg.plugin:Plugin}\n"})  # fmt: skip
    with pytest.raises(PlugyardError) as caught:
        yard.packages.install(build(stolen), trust="trusted")
    assert caught.value.code == "duplicate_plugin"
    assert yard.registry.require("calculator").source == "builtin"
    assert yard.packages.installed() == []


def test_an_upgrade_drops_the_ids_it_no_longer_declares(yard: Yard) -> None:
    yard.packages.install(build(shu_files(**{"manifest.yaml": TWO_PLUGINS})), name="pair")
    one = TWO_PLUGINS.replace("  pair-two: greeter_pkg.plugin:Plugin\n", "")
    done = yard.packages.install(build(shu_files(**{"manifest.yaml": one})), name="pair")
    assert yard.registry.find("pair-two") is None
    assert yard.registry.find("pair-one") is not None
    assert ("removed", "pair-two") in [(e.kind, e.plugin_id) for e in done.events]


def test_remove_unregisters_and_stays_removed(tmp_path: Path) -> None:
    with Yard.from_settings(settings(tmp_path)) as yard:
        yard.packages.install(build(shu_files()))
        _, events = yard.packages.remove("greeter")
        assert [e.plugin_id for e in events] == ["greeter"]
        assert yard.registry.find("greeter") is None
        with pytest.raises(PackageError) as caught:
            yard.packages.remove("greeter")
        assert caught.value.code == "package_not_found"
    with Yard.from_settings(settings(tmp_path)) as again:
        assert again.registry.find("greeter") is None


def test_a_yard_on_an_in_memory_store_has_no_packages() -> None:
    with Yard.from_settings(Settings(database=":memory:", governed=False)) as yard:
        with pytest.raises(PlugyardError) as caught:
            _ = yard.packages
        assert caught.value.code == "capability_unavailable"
