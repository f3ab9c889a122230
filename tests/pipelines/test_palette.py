"""The OLO palette: plugins by capability (ALL, Undefined) and control components by role."""

from __future__ import annotations

from plugyard.pipelines import capabilities_of, load, palette_view
from plugyard.yard import Yard


def test_sections_follow_the_pipelines_capabilities_then_undefined(yard: Yard) -> None:
    view = palette_view(yard.registry.list(), ["ACCESS", "CACHING"])
    sections = {s["capability"]: [p["id"] for p in s["plugins"]] for s in view["sections"]}
    assert list(sections) == ["ACCESS", "CACHING", "Undefined"]
    assert "guardrail-basic" in sections["ACCESS"] and "guardrail-basic" not in sections["CACHING"]
    assert (
        "observer-passthrough" in sections["ACCESS"]
        and "observer-passthrough" in sections["CACHING"]
    )
    assert "calculator" in sections["Undefined"]
    # A plugin that lists only capabilities this pipeline lacks is Undefined here.
    assert "t-model" in sections["Undefined"]


def test_control_components_are_listed_by_role(yard: Yard) -> None:
    view = palette_view(yard.registry.list())
    roles = {c["role"]: [p["id"] for p in c["plugins"]] for c in view["control"]}
    assert list(roles) == ["CONDITION", "ITERATOR", "FORK", "JOIN"]
    assert "condition-expression" in roles["CONDITION"] and "t-if" in roles["CONDITION"]
    assert roles["ITERATOR"] == ["iterator-batch"]
    summary = view["control"][0]["plugins"][0]
    assert set(summary) >= {"id", "name", "role", "capabilities", "available", "operations"}


def test_a_documents_capabilities_feed_its_palette() -> None:
    loaded = load({"capabilities": [{"capability": "B", "flow": []},
                                    {"capability": "A", "flow": []},
                                    {"capability": "B", "flow": []}]})  # fmt: skip
    assert loaded.document is not None
    assert capabilities_of(loaded.document) == ["B", "A"]
