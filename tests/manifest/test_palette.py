"""The OLO palette rules."""

from __future__ import annotations

from plugyard.manifest.model import Placement, PluginDescriptor
from plugyard.manifest.palette import UNDEFINED, palette


def plugin(pid: str, *caps: str, role: str = "CAPABILITY_STAGE") -> PluginDescriptor:
    return PluginDescriptor(
        id=pid,
        name=pid,
        placement=Placement(capabilities=caps, role=role),  # type: ignore[arg-type]
    )


PLUGINS = [
    plugin("model", "MODEL"),
    plugin("cache", "CACHING", "MEMORY"),
    plugin("guard", "ACCESS", "MODEL"),
    plugin("observer", "ALL"),
    plugin("experimental"),
    plugin("custom", "MY_STAGE"),
    plugin("if", role="CONDITION"),
    plugin("loop", role="ITERATOR"),
    plugin("fork", role="FORK"),
    plugin("join", role="JOIN"),
]


def ids(plugins: tuple[PluginDescriptor, ...]) -> list[str]:
    return [p.id for p in plugins]


def test_plugins_show_under_each_capability_they_list_and_all_under_every_one() -> None:
    view = palette(PLUGINS)
    assert [name for name, _ in view.sections] == [
        "ACCESS", "MEMORY", "MODEL", "CACHING", "MY_STAGE", UNDEFINED,
    ]  # fmt: skip
    assert ids(view.section("MODEL")) == ["guard", "model", "observer"]
    assert ids(view.section("CACHING")) == ["cache", "observer"]
    assert ids(view.section("MY_STAGE")) == ["custom", "observer"]


def test_plugins_without_capability_are_undefined_only() -> None:
    assert ids(palette(PLUGINS).section(UNDEFINED)) == ["experimental"]


def test_capabilities_outside_the_pipeline_make_a_plugin_undefined() -> None:
    view = palette(PLUGINS, ["ACCESS", "MODEL"])
    assert [name for name, _ in view.sections] == ["ACCESS", "MODEL", UNDEFINED]
    assert ids(view.section(UNDEFINED)) == ["cache", "custom", "experimental"]
    assert "observer" in ids(view.section("ACCESS"))


def test_control_components_are_listed_by_role_not_as_stages() -> None:
    view = palette(PLUGINS)
    assert [(role, ids(p)) for role, p in view.control] == [
        ("CONDITION", ["if"]), ("ITERATOR", ["loop"]), ("FORK", ["fork"]), ("JOIN", ["join"]),
    ]  # fmt: skip
    every_stage = {pid for _, members in view.sections for pid in ids(members)}
    assert every_stage.isdisjoint({"if", "loop", "fork", "join"})
