"""Any pipeline as a Mermaid flowchart."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import PipelineError
from plugyard.pipelines import load, mermaid

from .conftest import EXAMPLES


def diagram(source: object, pipeline: str | None = None) -> str:
    loaded = load(source)  # type: ignore[arg-type]
    assert loaded.document is not None, loaded.faults
    return mermaid(loaded.document, pipeline)


def test_capabilities_are_subgraphs_chained_in_order() -> None:
    text = diagram({"name": "p", "capabilities": [
        {"capability": "ACCESS", "flow": ["a"]}, {"capability": "MODEL", "flow": ["b"]},
    ]})  # fmt: skip
    assert text.splitlines()[0] == "flowchart TD"
    assert 'subgraph s2["ACCESS"]' in text and 'subgraph s4["MODEL"]' in text
    assert "n1 --> n3" in text and "n3 --> n5" in text and "n5 --> n6" in text


def test_a_condition_is_a_rhombus_with_yes_and_no_edges() -> None:
    text = diagram({"capabilities": [{"capability": "X", "flow": [
        {"condition": "c", "children": ["a"], "else": ["b"]},
    ]}]})  # fmt: skip
    assert '{"if c"}' in text
    assert "-->|yes|" in text and "-->|no|" in text


def test_an_iterator_loops_and_async_branches_fan_out_and_in() -> None:
    text = diagram({"capabilities": [{"capability": "X", "flow": [
        {"iterator": "i", "children": [
            {"mode": "ASYNC", "fork": "f", "join": "j", "children": ["a", "b"]}
        ]},
    ]}]})  # fmt: skip
    assert '{{"for each: i"}}' in text and "-.->" in text and "-->|done|" in text
    assert '[/"fork: f"/]' in text and '[\\"join: j"\\]' in text
    fork = next(line.split("[")[0].strip() for line in text.splitlines() if "fork: f" in line)
    assert sum(1 for line in text.splitlines() if line.strip().startswith(f"{fork} -->")) == 2


def test_labels_are_escaped_and_references_are_subroutines() -> None:
    text = diagram({"capabilities": [{"capability": "X", "flow": [
        {"plugin": "p", "id": 'say "hi"'}, {"pipeline": "other"},
    ]}], "pipelines": {"other": {"capabilities": []}}})  # fmt: skip
    assert "say #quot;hi#quot;: p" in text
    assert '[["pipeline other"]]' in text


def test_a_named_pipeline_can_be_drawn_and_an_unknown_one_is_refused() -> None:
    source = {"pipelines": {"a": {"capabilities": []}, "b": {"capabilities": []}}}
    assert "a: input" in diagram(source, "a") and "b: input" not in diagram(source, "a")
    assert "a: input" in diagram(source) and "b: input" in diagram(source)
    loaded = load(source)
    assert loaded.document is not None
    with pytest.raises(PipelineError) as caught:
        mermaid(loaded.document, "zzz")
    assert caught.value.code == "pipeline_not_found"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.*")), ids=lambda p: p.name)
def test_every_example_draws(path: Path) -> None:
    assert diagram(path.read_bytes()).startswith("flowchart TD\n")


def test_an_async_group_naming_no_fork_or_join_is_drawn_with_the_built_in_ones() -> None:
    document = {
        "capabilities": [{"capability": "M", "flow": [{"mode": "ASYNC", "children": ["a", "b"]}]}]
    }
    text = mermaid(load(document).document)  # type: ignore[arg-type]
    assert '[/"fork: built-in"/]' in text and '[\\"join: built-in"\\]' in text
