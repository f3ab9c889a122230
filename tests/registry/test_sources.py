"""Plugin folders and the built-in catalog: every dialect, trust from the operator, and
broken plugins reported without taking the others down."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plugyard.registry.catalog import CatalogSource
from plugyard.registry.sources import FolderSource, StaticSource, load_folder, plugin_manifests

from .conftest import FIXTURES, plugin

YARD = FIXTURES / "yard"
PLUGINS = YARD / "plugins"


def test_a_plugins_tree_yields_every_dialect_and_reports_the_broken_one() -> None:
    result = FolderSource(PLUGINS).load()
    found = {p.id: p for p in result.plugins}
    assert sorted(found) == ["cache-memory", "digest", "kb-notes", "twin-a", "twin-b", "weather"]
    assert {p.dialect for p in found.values()} == {"olo", "homeclaw", "mrp", "shu"}
    assert [(f.code, Path(f.source).parent.name) for f in result.failures] == [
        ("manifest_syntax", "broken")
    ]


def test_each_plugin_records_its_folder_manifest_and_family() -> None:
    found = {p.id: p for p in FolderSource(PLUGINS).load().plugins}
    notes = found["kb-notes"]
    assert notes.family == "kb"
    assert notes.location == str((PLUGINS / "kb" / "kb-notes").resolve())
    assert notes.manifest_path == str((PLUGINS / "kb" / "kb-notes" / "plugin.json").resolve())
    assert notes.source == "folder"
    assert notes.descriptor.knowledge is not None  # plugin.kus.md was read beside it
    assert found["weather"].descriptor.config == {"town": "Lyon"}  # HomeClaw config.yml
    twins = {found["twin-a"].manifest_path, found["twin-b"].manifest_path}
    assert twins == {str((PLUGINS / "tool" / "twins" / "plugin.yaml").resolve())}


def test_trust_is_the_sources_never_the_manifests() -> None:
    assert {p.trust for p in FolderSource(PLUGINS, trust="untrusted").load().plugins} == {
        "untrusted"
    }
    assert {p.trust for p in FolderSource(PLUGINS).load().plugins} == {"trusted"}


def test_a_single_plugin_folder_or_manifest_file_is_a_source() -> None:
    (weather,) = FolderSource(PLUGINS / "tool" / "weather").load().plugins
    (again,) = FolderSource(PLUGINS / "tool" / "weather" / "plugin.yaml").load().plugins
    assert weather == again


def test_a_missing_folder_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    result = FolderSource(tmp_path / "nowhere").load()
    assert result.plugins == ()
    assert [f.code for f in result.failures] == ["manifest_not_found"]


def test_the_code_inside_a_plugin_folder_is_not_searched_for_manifests(tmp_path: Path) -> None:
    folder = tmp_path / "tool" / "weather"
    shutil.copytree(PLUGINS / "tool" / "weather", folder)
    vendored = folder / "vendor" / "lib"
    vendored.mkdir(parents=True)
    (vendored / "manifest.json").write_text("{not json")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "plugin.yaml").write_text("broken: [")
    assert plugin_manifests(tmp_path) == [folder / "plugin.yaml"]
    assert load_folder(tmp_path, source="folder", trust="trusted").failures == ()


def test_the_same_id_twice_keeps_the_first_and_reports_the_second(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copytree(PLUGINS / "tool" / "weather", tmp_path / name)
    result = FolderSource(tmp_path).load()
    assert [p.location for p in result.plugins] == [str((tmp_path / "a").resolve())]
    assert [f.code for f in result.failures] == ["duplicate_plugin"]
    assert result.failures[0].source.endswith("b/plugin.yaml")


def test_a_static_source_hands_back_its_plugins() -> None:
    plugins = (plugin("a"), plugin("b"))
    assert StaticSource(plugins).load().plugins == plugins


# the catalog ------------------------------------------------------------------------


def test_the_catalog_loads_enabled_entries_with_their_trust() -> None:
    result = CatalogSource(YARD / "catalog.json").load()
    found = {p.id: p for p in result.plugins}
    assert sorted(found) == ["digest", "kb-notes", "weather"]
    assert {i: p.trust for i, p in found.items()} == {
        "digest": "untrusted",
        "kb-notes": "trusted",
        "weather": "trusted",
    }
    assert {p.source for p in found.values()} == {"catalog"}
    assert result.skipped == ("plugins/tool/cache-memory",)


def test_the_catalogs_bad_entries_are_reported_one_by_one() -> None:
    failures = CatalogSource(YARD / "catalog.json").load().failures
    assert sorted((f.code, f.pointer) for f in failures) == [
        ("manifest_invalid_value", "/plugins/6"),
        ("manifest_not_found", ""),
        ("manifest_syntax", ""),
    ]


def test_a_yaml_catalog_and_its_root_option(tmp_path: Path) -> None:
    catalog = tmp_path / "config" / "plugins.yaml"
    catalog.parent.mkdir()
    catalog.write_text("- plugins/tool/weather\n- path: plugins/kb/kb-notes\n  trust: untrusted\n")
    result = CatalogSource(catalog, root=YARD).load()
    assert {p.id: p.trust for p in result.plugins} == {
        "weather": "trusted",
        "kb-notes": "untrusted",
    }
    assert result.failures == ()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", "manifest_syntax"),
        ('{"plugins": "plugins/tool/weather"}', "manifest_invalid_value"),
        ('{"trust": "maybe", "plugins": []}', "manifest_invalid_value"),
        ('{"plugins": [], "extra": 1}', "manifest_invalid_value"),
    ],
)
def test_a_broken_catalog_is_one_failure(tmp_path: Path, text: str, code: str) -> None:
    catalog = tmp_path / "plugins.json"
    catalog.write_text(text)
    result = CatalogSource(catalog).load()
    assert result.plugins == ()
    assert [f.code for f in result.failures] == [code]


def test_a_missing_catalog_is_one_failure(tmp_path: Path) -> None:
    result = CatalogSource(tmp_path / "plugins.json").load()
    assert [f.code for f in result.failures] == ["manifest_not_found"]


@pytest.mark.parametrize(
    "entry",
    [{"path": "/etc/plugins"}, {"path": ""}, {"path": "x", "enabled": "yes"}, 3],
)
def test_catalog_entries_are_checked(tmp_path: Path, entry: object) -> None:
    catalog = tmp_path / "plugins.json"
    catalog.write_text(json.dumps({"plugins": [entry, "plugins/tool/weather"]}))
    result = CatalogSource(catalog, root=YARD).load()
    assert [p.id for p in result.plugins] == ["weather"]
    assert [(f.code, f.pointer) for f in result.failures] == [
        ("manifest_invalid_value", "/plugins/0")
    ]
