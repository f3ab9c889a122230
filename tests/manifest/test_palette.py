"""The OLO palette rules."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard.manifest.model import Placement, PluginDescriptor
from plugyard.manifest.palette import CONTROL_ROLES, DEFAULT_ORDER, UNDEFINED, palette


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


def reference(
    plugins: Sequence[PluginDescriptor], capabilities: Sequence[str] | None = None
) -> dict[str, object]:
    """The rules as the seed states them, one section at a time (quadratic, plain)."""
    items = sorted(plugins, key=lambda p: p.id)
    stages = [p for p in items if p.placement.role == "CAPABILITY_STAGE"]
    if capabilities is None:
        named = {c for p in stages for c in p.placement.capabilities if c != "ALL"}
        order = [c for c in DEFAULT_ORDER if c in named] + sorted(named - set(DEFAULT_ORDER))
    else:
        order = [c for c in capabilities if c not in {"ALL", UNDEFINED}]
    sections = [
        {"capability": c, "plugins": [p.id for p in stages if p.placement.allows(c)]} for c in order
    ]
    placed = {pid for s in sections for pid in s["plugins"]}  # type: ignore[attr-defined]
    sections.append({"capability": UNDEFINED,
                     "plugins": [p.id for p in stages if p.id not in placed]})  # fmt: skip
    control = [
        {"role": r, "plugins": [p.id for p in items if p.placement.role == r]}
        for r in CONTROL_ROLES
    ]
    return {"sections": sections, "control": control}


CAPS = ["ALL", "ACCESS", "MODEL", "CACHING", "MY_STAGE", "OTHER", UNDEFINED]
placements = st.one_of(
    st.builds(
        Placement,
        capabilities=st.lists(st.sampled_from(CAPS), max_size=4).map(tuple),
    ),
    st.builds(Placement, role=st.sampled_from(CONTROL_ROLES)),
)


@settings(max_examples=300, deadline=None)
@given(
    chosen=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), placements, max_size=25
    ),
    capabilities=st.none() | st.lists(st.sampled_from(CAPS), max_size=4),
)
def test_grouping_agrees_with_the_rules_stated_one_section_at_a_time(
    chosen: dict[str, Placement], capabilities: list[str] | None
) -> None:
    plugins = [PluginDescriptor(id=pid, name=pid, placement=where) for pid, where in chosen.items()]
    assert palette(plugins, capabilities).to_dict() == reference(plugins, capabilities)
