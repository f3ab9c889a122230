"""Sync on start: built-ins from their sources, externals from the store, vanished
built-ins removed — and a restart gives the same registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plugyard.registry.catalog import CatalogSource
from plugyard.registry.registry import Registry
from plugyard.registry.sources import FolderSource, PluginSource, SourceResult, StaticSource
from plugyard.registry.sync import sync_on_start
from plugyard.store.store import Store

from .conftest import FIXTURES, plugin
from .helpers import Recorder, assert_in_step

YARD = FIXTURES / "yard"


@pytest.fixture
def yard(tmp_path: Path) -> Path:
    """A copy of the fixture yard that a test may change."""
    copy = tmp_path / "yard"
    shutil.copytree(YARD, copy)
    return copy


def start(url: str, *sources: PluginSource) -> tuple[Registry, Store, Recorder]:
    store = Store.open(url)
    registry = Registry.over(store)
    recorder = Recorder()
    registry.subscribe(recorder)
    sync_on_start(registry, sources)
    return registry, store, recorder


def test_a_restart_gives_the_same_registry_and_writes_nothing(
    database_url: str, yard: Path
) -> None:
    sources = (FolderSource(yard / "plugins"),)
    first, store, _ = start(database_url, *sources)
    first.register(plugin("quote", source="external"))
    store.close()

    second, store, recorder = start(database_url, *sources)
    assert second.list() == first.list()
    assert recorder.events == []
    assert_in_step(second)
    store.close()


def test_the_report_says_what_was_loaded_removed_kept_and_broken(
    database_url: str, yard: Path
) -> None:
    with Store.open(database_url) as store:
        registry = Registry.over(store)
        registry.register(plugin("quote", source="external"))
        report = sync_on_start(registry, [CatalogSource(yard / "catalog.json")])
        assert sorted(report.loaded) == ["digest", "kb-notes", "weather"]
        assert report.kept == ("quote",)
        assert report.removed == ()
        assert sorted(f.code for f in report.failures) == [
            "manifest_invalid_value",
            "manifest_not_found",
            "manifest_syntax",
        ]
        assert report.skipped == ("plugins/tool/cache-memory",)
        assert [(e.kind, e.plugin_id) for e in report.events] == [
            ("registered", i) for i in report.loaded
        ]


def test_a_vanished_built_in_is_removed_and_externals_stay(database_url: str, yard: Path) -> None:
    sources = (FolderSource(yard / "plugins"),)
    first, store, _ = start(database_url, *sources)
    first.register(plugin("quote", source="external"))
    store.close()
    shutil.rmtree(yard / "plugins" / "tool" / "digest")

    second, store, recorder = start(database_url, *sources)
    assert second.find("digest") is None
    assert second.find("quote") is not None
    assert recorder.kinds() == [("removed", "digest")]
    assert_in_step(second)
    store.close()


def test_a_changed_built_in_is_updated_even_to_an_older_version(
    database_url: str, yard: Path
) -> None:
    manifest = yard / "plugins" / "kb" / "kb-notes" / "plugin.json"
    sources = (FolderSource(yard / "plugins"),)
    _, store, _ = start(database_url, *sources)
    store.close()
    manifest.write_text(manifest.read_text().replace('"2.1.0"', '"2.0.0"'))

    second, store, recorder = start(database_url, *sources)
    notes = second.find("kb-notes")
    assert notes is not None and notes.descriptor.version == "2.0.0"
    assert recorder.kinds() == [("updated", "kb-notes")]
    store.close()


def test_a_disabled_catalog_entry_is_removed_on_the_next_start(
    database_url: str, yard: Path
) -> None:
    catalog = yard / "catalog.json"
    _, store, _ = start(database_url, CatalogSource(catalog))
    store.close()
    catalog.write_text(catalog.read_text().replace('"plugins/tool/weather",', ""))

    second, store, _ = start(database_url, CatalogSource(catalog))
    assert second.find("weather") is None
    assert second.find("kb-notes") is not None
    store.close()


def test_an_external_keeps_its_id_against_a_new_built_in(database_url: str, yard: Path) -> None:
    with Store.open(database_url) as store:
        registry = Registry.over(store)
        external = plugin("weather", source="external")
        registry.register(external)
        report = sync_on_start(registry, [FolderSource(yard / "plugins")])
        assert registry.find("weather") == external
        assert ("duplicate_plugin", "weather") in {
            (f.code, Path(f.source).parent.name) for f in report.failures
        }


def test_sources_earlier_in_the_list_win(database_url: str, yard: Path) -> None:
    with Store.open(database_url) as store:
        registry = Registry.over(store)
        report = sync_on_start(
            registry, [FolderSource(yard / "plugins" / "tool" / "weather", kind="builtin"),
                       FolderSource(yard / "plugins")]
        )  # fmt: skip
        weather = registry.find("weather")
        assert weather is not None and weather.source == "builtin"
        assert [f.code for f in report.failures].count("duplicate_plugin") == 1


class Exploding:
    name = "exploding"

    def load(self) -> SourceResult:
        raise RuntimeError("source bug")


def test_a_crashing_source_is_a_failure_not_a_failed_start(yard: Path) -> None:
    registry = Registry()
    report = sync_on_start(registry, [Exploding(), FolderSource(yard / "plugins")])
    assert "weather" in registry
    assert report.failures[0].source == "exploding"
    assert report.failures[0].code == "plugin_load_error"


def test_a_source_may_move_a_plugin_between_kinds(yard: Path) -> None:
    registry = Registry()
    sync_on_start(registry, [FolderSource(yard / "plugins")])
    moved = plugin("weather", source="entrypoint", location="/site/acme")
    sync_on_start(registry, [StaticSource((moved,))])
    assert registry.list() == (moved,)
