"""The catalog after a change: what the console keeps between requests (the layout by
placement, the viewers' rights, the groupings) follows every registry event and every
policy load on the very next page."""

from __future__ import annotations

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard.console.catalog_memo import CatalogMemo, Layout
from plugyard.manifest.model import NoRuntime, Operation, Placement, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.yard import Yard

from .conftest import POLICY
from .test_catalog import section


def plugin(
    pid: str, *caps: str, role: str = "CAPABILITY_STAGE", **more: object
) -> RegisteredPlugin:
    descriptor = PluginDescriptor(
        id=pid,
        name=pid,
        operations=(Operation(id="run"),),
        placement=Placement(capabilities=caps, role=role),  # type: ignore[arg-type]
        runtime=NoRuntime(reason="test"),
        **more,  # type: ignore[arg-type]
    )
    return RegisteredPlugin.of(descriptor, "catalog")


def test_a_registration_shows_on_the_next_page(admin: TestClient, yard: Yard) -> None:
    assert "aaa-new" not in section(admin.get("/?section=MODEL").text, "MODEL")  # kept now
    yard.registry.register(plugin("aaa-new", "MODEL"))
    assert section(admin.get("/?section=MODEL").text, "MODEL")[0] == "aaa-new"
    yard.registry.register(plugin("aaa-new", "BRAND_NEW"), replace=True)
    page = admin.get("/").text
    assert section(page, "BRAND_NEW")[0] == "aaa-new"  # a section of its own, ALL with it
    assert "observer-passthrough" in section(page, "BRAND_NEW")
    assert "aaa-new" not in section(admin.get("/?section=MODEL").text, "MODEL")
    yard.registry.unregister("aaa-new")
    assert 'data-section="BRAND_NEW"' not in admin.get("/").text


def test_health_reaches_the_next_page(admin: TestClient, yard: Yard) -> None:
    assert "cache-memory" in section(admin.get("/?health=available").text, "CACHING")
    yard.registry.set_availability("cache-memory", False, "down for the test")
    assert 'data-plugin="cache-memory"' not in admin.get("/?health=available").text
    assert "cache-memory" in section(admin.get("/?health=unavailable").text, "CACHING")


def test_a_revoked_right_hides_a_plugin_on_the_next_page(clerk: TestClient, yard: Yard) -> None:
    assert "ticker" in clerk.get("/").text
    revoked = POLICY.replace('  - {to: "role:clerk", plugin: ticker, effect: allow}\n', "")
    assert revoked != POLICY
    yard.admin.load_policy(revoked, by="admin")
    assert 'data-plugin="ticker"' not in clerk.get("/").text
    yard.admin.load_policy(POLICY, by="admin")
    assert 'data-plugin="ticker"' in clerk.get("/").text


def test_a_policy_for_someone_else_leaves_the_viewer_as_it_was(
    clerk: TestClient, yard: Yard
) -> None:
    before = clerk.get("/").text
    yard.admin.load_policy(POLICY + '  - {to: "role:reader", plugin: ticker, effect: deny}\n',
                           by="admin")  # fmt: skip
    assert clerk.get("/").text.count('data-plugin="') == before.count('data-plugin="')
    assert 'data-plugin="ticker"' in clerk.get("/").text


def test_a_plugin_that_comes_to_need_a_permission_hides_under_the_same_policy(
    clerk: TestClient, yard: Yard
) -> None:
    assert 'data-plugin="ticker"' in clerk.get("/").text
    ticker = yard.registry.find("ticker")
    assert ticker is not None
    needing = ticker.descriptor.model_copy(update={"permissions": ("vault.open",)})
    yard.registry.register(RegisteredPlugin.of(needing, ticker.source,
                                               location=ticker.location), replace=True)  # fmt: skip
    assert 'data-plugin="ticker"' not in clerk.get("/").text


CAPS = ["MODEL", "ACCESS", "ALL", "OTHER"]
steps = st.lists(
    st.tuples(
        st.sampled_from(["put", "drop"]),
        st.sampled_from(["p1", "p2", "p3", "p4", "p5"]),
        st.lists(st.sampled_from(CAPS), max_size=2, unique=True),
        st.sampled_from(["CAPABILITY_STAGE", "CAPABILITY_STAGE", "CONDITION"]),
    ),
    max_size=20,
)


def shape(layout: Layout) -> dict[object, list[str]]:
    return {
        where: [p.id for p in members] for where, (_, members) in layout.groups.items() if members
    }


@settings(max_examples=100, deadline=None)
@given(first=steps, then=steps)
def test_the_patched_layout_is_the_layout_made_afresh(
    first: list[tuple[str, str, list[str], str]], then: list[tuple[str, str, list[str], str]]
) -> None:
    registry = Registry()
    memo = CatalogMemo()
    registry.subscribe(memo.changed)
    for batch in (first, then):
        for action, pid, caps, role in batch:
            if action == "put":
                registry.register(plugin(pid, *caps, role=role), replace=True)
            else:
                registry.unregister(pid)
            if pid == "p3":  # now and then a request between changes: patched, not remade
                memo.layout(registry.list)
        assert shape(memo.layout(registry.list)) == shape(Layout.of(registry.list()))
