"""Every bundled plugin loads from its manifest, its code passes check(), and together they
use every dialect, every code style and every placement the seeds describe."""

from __future__ import annotations

from collections import Counter

import pytest
from bundled_plugins import RUNTIME, bundled, plugin_target

from plugyard.manifest.load import load_file
from plugyard.runtimes.base import Target

IDS = sorted(bundled())


def test_there_are_at_least_ten_useful_tools_and_the_placement_examples() -> None:
    descriptors = [d for d, _ in bundled().values()]
    roles = Counter(d.placement.role for d in descriptors)
    assert {"CONDITION", "ITERATOR", "FORK", "JOIN"} <= roles.keys()
    placed = {tuple(sorted(d.placement.capabilities)) for d in descriptors}
    assert {("CACHING",), ("ACCESS", "MODEL"), ("ALL",)} <= placed
    undefined = [d for d in descriptors if d.placement.role == "CAPABILITY_STAGE" and not
                 d.placement.capabilities and d.x.get("/schemaVersion")]  # fmt: skip
    assert undefined, "an OLO plugin under Undefined"
    assert len(descriptors) >= 18


def test_the_manifests_use_all_four_dialects() -> None:
    dialects = Counter(load_file(path).dialect for _, path in bundled().values())
    assert set(dialects) == {"olo", "homeclaw", "shu", "mrp"}


@pytest.mark.parametrize("plugin_id", IDS)
def test_a_bundled_manifest_loads_without_warnings(plugin_id: str) -> None:
    _, path = bundled()[plugin_id]
    document = load_file(path)
    assert [w.code for w in document.warnings] == []
    assert len(document.plugins) == 1


@pytest.mark.parametrize("plugin_id", IDS)
def test_a_bundled_plugin_s_code_passes_check(plugin_id: str) -> None:
    assert RUNTIME.check(plugin_target(plugin_id)) is None


@pytest.mark.parametrize("plugin_id", IDS)
def test_a_bundled_plugin_is_described_for_discovery(plugin_id: str) -> None:
    target = plugin_target(plugin_id)
    descriptor = RUNTIME.describe(target) or target.descriptor
    assert len(descriptor.description) >= 80, "discovery searches descriptions"
    assert descriptor.operations
    for op in descriptor.operations:
        assert op.output_schema is not None, op.id
        assert op.parameters.get("properties") or op.id in {"list_databases"}, op.id
        if descriptor.family != "tool":
            continue  # a family's parameters are its DS027 contract's
        for name, prop in op.parameters.get("properties", {}).items():
            assert isinstance(prop, dict) and prop.get("description"), (op.id, name)


def test_the_three_code_styles_are_all_used() -> None:
    styles: set[str] = set()
    modes: set[str] = set()
    for plugin_id in IDS:
        target = plugin_target(plugin_id)
        binding = RUNTIME._binding(target)  # the runtime's own record of how it calls them
        assert not isinstance(binding, str)
        styles |= {h.style for h in binding.handlers.values()}
        modes |= {h.mode for h in binding.handlers.values()}
    assert styles == {"keywords", "execute", "family"}
    assert {"inline", "thread"} <= modes


def test_the_decorated_built_in_equals_its_manifest_once_described() -> None:
    target = plugin_target("json-query")
    binding = RUNTIME._binding(target)
    assert not isinstance(binding, str) and binding.definition is not None
    assert RUNTIME.describe(target) == binding.definition.descriptor


def test_untrusted_copies_of_built_ins_do_not_run_in_process() -> None:
    target = plugin_target("calculator")
    untrusted = Target(target.descriptor, target.location, "untrusted")
    assert RUNTIME.check(untrusted) is not None
