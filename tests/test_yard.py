"""The composition root: a yard over the embedded store, its restart, and its calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plugyard.builtins import BUILTINS_DIR
from plugyard.yard import Settings, Yard


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "yard.db")


def test_a_yard_registers_every_bundled_plugin_available(db: str) -> None:
    with Yard.from_settings(Settings(database=db)) as yard:
        plugins = yard.registry.list()
        assert len(plugins) >= 18
        assert yard.report.failures == ()
        assert [p.id for p in plugins if not p.available] == []
        assert {p.dialect for p in plugins} == {"olo", "homeclaw", "mrp", "shu"}


def test_a_restart_gives_the_same_registry_and_writes_nothing(db: str) -> None:
    with Yard.from_settings(Settings(database=db)) as first:
        before = {p.id: p.content_hash for p in first.registry.list()}
    with Yard.from_settings(Settings(database=db)) as second:
        after = {p.id: p.content_hash for p in second.registry.list()}
        assert second.report.events == ()
    assert after == before


def test_code_refines_the_descriptor_before_registration(db: str) -> None:
    with Yard.from_settings(Settings(database=db)) as yard:
        calculator = yard.registry.find("calculator")
        assert calculator is not None
        # the Shu manifest names no parameters; the class's get_schema() does
        assert "expression" in calculator.descriptor.operations[0].parameters["properties"]


def test_calls_go_through_the_executor_and_are_audited(db: str) -> None:
    with Yard.from_settings(Settings(database=db)) as yard:
        result = asyncio.run(yard.call("calculator", params={"expression": "2 * (3 + 4)"}))
        assert result.ok
        assert result.data["result"] == 14
        bad = asyncio.run(yard.call("calculator", params={"expression": 7}))
        assert bad.error is not None
        assert bad.error.code == "invalid_parameters"
        assert yard.governance is not None
        assert [e.status for e in yard.governance.audit] == ["success", "error"]


def test_a_broken_plugin_folder_is_skipped_and_the_others_load(db: str, tmp_path: Path) -> None:
    broken = tmp_path / "plugins" / "tool" / "broken"
    broken.mkdir(parents=True)
    (broken / "plugin.yaml").write_text("id: broken\nname: Broken\ncapabilities: [}\n")
    missing_code = tmp_path / "plugins" / "tool" / "nocode"
    missing_code.mkdir(parents=True)
    (missing_code / "plugin.yaml").write_text(
        "id: nocode\nname: No code\ndescription: d\ncapabilities:\n"
        "  - id: go\n    name: Go\n    description: d\n    parameters: []\n"
    )
    settings = Settings(database=db, plugin_dirs=(tmp_path / "plugins",))
    with Yard.from_settings(settings) as yard:
        assert [f.code for f in yard.report.failures] == ["manifest_syntax"]
        nocode = yard.registry.find("nocode")
        assert nocode is not None
        assert nocode.available is False
        result = asyncio.run(yard.call("nocode", "go"))
        assert result.error is not None
        assert result.error.code == "plugin_unavailable"
        assert yard.registry.find("calculator") is not None


def test_settings_read_the_environment() -> None:
    env = {
        "PLUGYARD_DATABASE_URL": "sqlite:///x.db",
        "PLUGYARD_PLUGIN_DIRS": f"a{__import__('os').pathsep}b",
        "PLUGYARD_BUILTINS": "0",
        "PLUGYARD_ENTRYPOINTS": "dist-a,dist-b:entry",
        "PLUGYARD_EXECUTION": "ray://10.0.0.5:10001",
        "PLUGYARD_EXECUTION_CONNECT_TIMEOUT_S": "2.5",
    }
    settings = Settings.from_env(env)
    assert (settings.execution, settings.execution_connect_timeout_s) == (
        "ray://10.0.0.5:10001",
        2.5,
    )
    assert Settings.from_env({}).execution == "local"
    assert settings.database == "sqlite:///x.db"
    assert settings.plugin_dirs == (Path("a"), Path("b"))
    assert settings.builtins is False
    assert settings.entrypoints == ("dist-a", "dist-b:entry")
    assert Settings.from_env(env, database="other.db").database == "other.db"


def test_builtins_live_inside_the_package() -> None:
    assert (BUILTINS_DIR / "tool" / "calculator").is_dir()


def test_untrusted_plugins_get_no_egress_by_asking_for_it(tmp_path: Path) -> None:
    from dataclasses import replace as copy_with

    from plugyard.manifest.model import Operation, PluginDescriptor, PythonRuntime
    from plugyard.registry.model import RegisteredPlugin

    descriptor = PluginDescriptor(
        id="web",
        name="web",
        operations=(Operation(id="go"),),
        runtime=PythonRuntime(entrypoint="x:y"),
        host_capabilities=("http",),
        config={"egress": ["*"]},
    )
    with Yard.from_settings(Settings(database=str(tmp_path / "y.db"))) as yard:
        assert yard.governance is not None
        trusted = RegisteredPlugin.of(descriptor, "code", trust="trusted")
        untrusted = copy_with(trusted, trust="untrusted")
        assert yard.governance.egress(trusted) == ("*",)
        assert yard.governance.egress(untrusted) == ()
        assert yard.policy is not None
        yard.policy.load_text("grants: []\negress: {web: [api.example.org]}")
        assert yard.governance.egress(untrusted) == ("api.example.org",)
