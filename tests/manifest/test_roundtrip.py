"""dialect → canonical → any dialect (as text) → canonical gives the same descriptor, for
every fixture and bundled example."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import ManifestError
from plugyard.manifest.dialects import BY_NAME
from plugyard.manifest.exporters.dialect import to_dialect
from plugyard.manifest.exporters.text import DEFAULT_SYNTAX, render
from plugyard.manifest.load import load_file, load_text
from plugyard.manifest.model import PluginDescriptor

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p
    for folder in (ROOT / "tests" / "manifest" / "fixtures", ROOT / "examples")
    for p in folder.rglob("*")
    if p.is_file()
    and p.suffix in {".yaml", ".yml", ".json", ".py", ".js"}
    and p.name not in {"config.yml", "config.yaml"}
)


def _plugins() -> list[tuple[str, PluginDescriptor]]:
    out: list[tuple[str, PluginDescriptor]] = []
    for path in FILES:
        try:
            doc = load_file(path)
        except ManifestError:
            continue
        out.extend((f"{path.relative_to(ROOT)}#{p.id}", p) for p in doc.plugins)
    return out


PLUGINS = _plugins()


def test_there_are_plugins_from_every_dialect() -> None:
    assert len(PLUGINS) >= 20


@pytest.mark.parametrize("dialect", sorted(BY_NAME))
@pytest.mark.parametrize(("label", "plugin"), PLUGINS, ids=[label for label, _ in PLUGINS])
def test_round_trip_through_text_is_lossless(
    label: str, plugin: PluginDescriptor, dialect: str
) -> None:
    text = render([to_dialect(plugin, dialect)], DEFAULT_SYNTAX[dialect])
    back = load_text(text)
    assert back.dialect == dialect, label
    assert back.plugins == (plugin,)


def test_invalid_json_schema_in_a_parameter_list_is_refused_at_its_entry() -> None:
    text = "plugin:\n  id: a\n  inputs:\n    - name: x\n      type: string\n      enum: 3\n"
    with pytest.raises(ManifestError) as info:
        load_text(text)
    assert [(p.code, p.pointer) for p in info.value.problems] == [
        ("manifest_invalid_schema", "/plugin/inputs/0")
    ]


def test_invalid_json_schema_in_a_canonical_document_is_refused() -> None:
    text = (
        '{"$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json", "id": "a",'
        ' "name": "a", "operations": [{"id": "x", "parameters": {"type": "nope"}}]}'
    )
    with pytest.raises(ManifestError) as info:
        load_text(text)
    assert [(p.code, p.pointer) for p in info.value.problems] == [
        ("manifest_invalid_schema", "/operations/0/parameters")
    ]
