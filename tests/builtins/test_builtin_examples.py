"""Every bundled operation comes with 3 to 5 example requests, so discovery's memory
knows each one by how users ask for it, not by its description alone (docs/manifest.md)."""

from __future__ import annotations

import ast
import re
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from bundled_plugins import RUNTIME, bundled, plugin_target

from plugyard.manifest.model import PluginDescriptor

IDS = sorted(bundled())
FEWEST, MOST = 3, 5
#: Memory leaves out a longer example as a message asking for several things.
MOST_WORDS = 25


def described(plugin_id: str) -> PluginDescriptor:
    target = plugin_target(plugin_id)
    return RUNTIME.describe(target) or target.descriptor


@pytest.mark.parametrize("plugin_id", IDS)
def test_every_bundled_operation_has_three_to_five_examples(plugin_id: str) -> None:
    descriptor = described(plugin_id)
    for op in descriptor.operations:
        # A dialect that lists no operations (OLO, MRP-VM, Shu) gives its examples to the
        # plugin; an operation without its own is asked for by its plugin's.
        examples = op.examples or descriptor.examples
        assert FEWEST <= len(examples) <= MOST, (op.id, len(examples))


@pytest.mark.parametrize("plugin_id", IDS)
def test_no_bundled_example_list_exceeds_five(plugin_id: str) -> None:
    descriptor = described(plugin_id)
    lists = [descriptor.examples, *(op.examples for op in descriptor.operations)]
    assert all(len(examples) <= MOST for examples in lists)


@pytest.mark.parametrize("plugin_id", IDS)
def test_a_bundled_example_is_one_distinct_request_memory_keeps(plugin_id: str) -> None:
    descriptor = described(plugin_id)
    texts = [*descriptor.examples, *(t for op in descriptor.operations for t in op.examples)]
    assert len(set(texts)) == len(texts)
    for text in texts:
        assert len(text.split()) <= MOST_WORDS, text
        assert text.strip().lower() not in descriptor.description.lower(), text


def _bench_requests() -> list[str]:
    """The requests of bench/ask.py, read from its source (importing it would load the
    benchmark's model stack)."""
    source = (Path(__file__).parents[2] / "bench" / "ask.py").read_text(encoding="utf-8")
    return [
        node.args[0].value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("Request", "NONE")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]


def _bench_sets() -> dict[str, list[str]]:
    """The request texts of each of bench/ask.py's lists, by the list's name."""
    source = (Path(__file__).parents[2] / "bench" / "ask.py").read_text(encoding="utf-8")
    sets: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            sets[node.target.id] = [
                call.args[0].value
                for call in ast.walk(node)
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id in ("Request", "NONE") and call.args
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
            ]  # fmt: skip
    return sets


#: At or above this similarity a request of a set written later is one of an earlier
#: set asked again, and the later set's first measure is no longer held out. "later"
#: was written before this was checked and holds five ("what's 26.2 miles in km");
#: the first draft of "fourth" held fourteen and was written again.
SAME_REQUEST = 0.8


@pytest.mark.parametrize("name", ["FRESH", "FOURTH", "FIFTH", "SIXTH"])
def test_a_set_written_later_asks_none_of_the_earlier_requests_again(name: str) -> None:
    sets = _bench_sets()
    order = ["REQUESTS", "FRESH", "LATER", "FOURTH", "FIFTH", "SIXTH"]
    earlier = [_words(t) for other in order[: order.index(name)] for t in sets[other]]
    for text in sets[name]:
        request = _words(text)
        closest = max(earlier, key=lambda r: SequenceMatcher(None, request, r).ratio())
        assert SequenceMatcher(None, request, closest).ratio() < SAME_REQUEST, (text, closest)


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


#: Above this similarity an example is a near copy of a benchmark request ("convert 5 km
#: to miles" and "Convert 3 km to miles" score 0.95); the bench then measures recall.
NEAR_COPY = 0.75


@pytest.mark.parametrize("plugin_id", IDS)
def test_no_bundled_example_copies_a_benchmark_request(plugin_id: str) -> None:
    requests = [_words(r) for r in _bench_requests()]
    assert len(requests) > 50
    descriptor = described(plugin_id)
    texts = [*descriptor.examples, *(t for op in descriptor.operations for t in op.examples)]
    for text in texts:
        example = _words(text)
        closest = max(requests, key=lambda r: SequenceMatcher(None, example, r).ratio())
        assert SequenceMatcher(None, example, closest).ratio() < NEAR_COPY, (text, closest)


def _described_texts(descriptor: PluginDescriptor) -> list[str]:
    """Every description the model or discovery reads: the plugin's, each operation's
    and each parameter's."""
    texts = [descriptor.description]
    for op in descriptor.operations:
        texts.append(op.description)
        properties = op.parameters.get("properties")
        if isinstance(properties, dict):
            texts += [str(p.get("description", "")) for p in properties.values()
                      if isinstance(p, dict)]  # fmt: skip
    return [t for t in texts if t]


@pytest.mark.parametrize("plugin_id", IDS)
def test_no_bundled_description_copies_a_benchmark_request(plugin_id: str) -> None:
    # A description's "questions like …" and "e.g. …" are read by the model before it
    # writes a call: a benchmark value there would be copied, and counted right.
    bench = _bench_requests()
    requests = [_words(r) for r in bench]
    quoted = {q for r in bench for q in re.findall(r"[\"“]([^\"”]{6,})[\"”]", r)}
    for text in _described_texts(described(plugin_id)):
        assert not [q for q in quoted if q in text], text
        for part in re.split(r"[,.;:()]| or ", text):
            words = _words(part)
            if len(words.split()) < 4:
                continue
            closest = max(requests, key=lambda r: SequenceMatcher(None, words, r).ratio())
            assert SequenceMatcher(None, words, closest).ratio() < NEAR_COPY, (part, closest)
