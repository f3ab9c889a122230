"""Generated manifests and mutations of them: loading either succeeds or raises
``ManifestError`` — never anything else, never a hang."""

from __future__ import annotations

import json
import pprint
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugyard.errors import ManifestError
from plugyard.manifest.load import MANIFEST_NAMES, load_text
from plugyard.manifest.safeload import parse

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    p
    for folder in (ROOT / "tests" / "manifest" / "fixtures", ROOT / "examples")
    for p in sorted(folder.rglob("*"))
    if p.is_file() and (p.name in MANIFEST_NAMES or p.suffix in {".yaml", ".yml", ".json", ".py"})
]


def _documents() -> list[Any]:
    out: list[Any] = []
    for path in SOURCES:
        try:
            # through JSON, so floats that remember their text become plain floats
            out.extend(json.loads(json.dumps(d)) for d in parse(path.read_bytes()).documents)
        except ManifestError:
            continue  # fixtures of refusals are mutated as text only
    return out


DOCUMENTS = _documents()
TEXTS = [p.read_text(errors="replace") for p in SOURCES]


def _keys(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# Keys of every dialect, so that mutations reach the readers' handling of each field.
VOCABULARY = sorted(set().union(*(_keys(d) for d in DOCUMENTS)) or {"id"})
HOSTILE = [
    "!!python/object/apply:os.system ['true']", "&a [*a]", "NaN", ".inf", "{a: 1, a: 2}",
    "[" * 80, "\x00", "\ud800", "\\", "'", '"', ": :", "- - -", "\t", "...", "PLUGIN_MANIFEST =",
]  # fmt: skip

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


def _replace(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in doc.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(doc)]


@st.composite
def mutated_data(draw: st.DrawFn) -> Any:
    doc = draw(st.sampled_from(DOCUMENTS))
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        action = draw(st.sampled_from(["value", "drop", "add", "wrap"]))
        if action == "value":
            doc = _replace(doc, path, draw(json_values))
        elif action == "wrap":
            doc = _replace(doc, path, [draw(json_values)])
        elif action == "drop" and path:
            target: Any = doc
            for step in path[:-1]:
                target = target[step]
            if isinstance(target, dict):
                doc = _replace(doc, path[:-1], {k: v for k, v in target.items() if k != path[-1]})
        elif action == "add":
            key = draw(st.sampled_from(VOCABULARY))
            target = doc
            for step in path:
                target = target[step]
            if isinstance(target, dict):
                doc = _replace(doc, path, {**target, key: draw(json_values)})
    return doc


def _render(doc: Any, syntax: str) -> str:
    if syntax == "json":
        return json.dumps(doc)
    if syntax == "python":
        return f"PLUGIN_MANIFEST = {pprint.pformat(doc)}\n"
    return yaml.safe_dump(doc, sort_keys=False)


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["cut", "insert", "hostile", "delete"]))
        if action == "cut":
            text = text[:at]
        elif action == "insert":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        elif action == "hostile":
            text = text[:at] + draw(st.sampled_from(HOSTILE)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
    return text


manifests = st.one_of(
    st.tuples(mutated_data(), st.sampled_from(["json", "yaml", "python"])).map(
        lambda t: _render(*t)
    ),
    mutated_text(),
)


def test_there_is_something_to_mutate() -> None:
    assert len(DOCUMENTS) >= 10


@settings(
    max_examples=10_000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(manifests)
def test_mutated_manifests_raise_only_manifest_errors(text: str) -> None:
    problems: tuple[object, ...] = ()
    try:
        load_text(text)
    except ManifestError as exc:
        problems = exc.problems
        if not problems:
            raise AssertionError("a refusal names at least one problem") from exc
