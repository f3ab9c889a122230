"""Stored descriptors are trusted by their model's stamp and validated on first use.

A row written under the running descriptor model is read without validating its
descriptor; a listing shows it from the stored data exactly as from the descriptor. A
row of another model (or none) is validated as it is read, and rejected with its code.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from plugyard.errors import ManifestError, PlugyardError
from plugyard.manifest.model import DESCRIPTOR_STAMP, descriptor_json_schema
from plugyard.registry.listing import grouped, summary
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.registry.rows import from_row, to_row
from plugyard.registry.sync import sync_on_start
from plugyard.store.plugins import PluginRow
from plugyard.store.store import Store

from .conftest import plugin
from .test_rows import corpus


def test_the_stamp_names_the_descriptor_schema() -> None:
    schema = json.dumps(descriptor_json_schema(), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(schema.encode()).hexdigest()[:16]
    assert digest == DESCRIPTOR_STAMP, f"the model changed: set DESCRIPTOR_STAMP = {digest!r}"


def test_a_stamped_row_is_validated_on_first_use_into_the_same_plugin() -> None:
    for original in corpus():
        row = to_row(original)
        assert row.stamp == DESCRIPTOR_STAMP
        back = from_row(row)
        assert back.stored_data is not None, original.id
        assert (back.id, back.family) == (original.id, original.family)
        assert back.descriptor == original.descriptor
        assert back.stored_data is None
        assert back == original


def test_listing_a_stored_plugin_shows_what_its_descriptor_shows() -> None:
    plugins = corpus()
    stored = [from_row(to_row(p)) for p in plugins]
    for lazy, original in zip(stored, plugins, strict=True):
        assert summary(lazy) == summary(original), original.id
    assert all(p.stored_data is not None for p in stored)  # listing validated none
    assert grouped(stored) == grouped(plugins)
    # Filtering by capability reads the same placements.
    only = ["TOOL", "Undefined"]
    assert grouped(stored, only=only) == grouped(plugins, only=only)


def _old_row(p: RegisteredPlugin, **descriptor: object) -> PluginRow:
    """The row an older plugyard wrote: no stamp (and maybe a descriptor it allowed)."""
    row = to_row(p)
    return replace(row, stamp=None, descriptor={**row.descriptor, **descriptor})


def test_a_row_of_another_model_is_validated_as_it_is_read() -> None:
    good = from_row(_old_row(plugin("old-good")))
    assert good.stored_data is None  # validated already
    with pytest.raises(ManifestError) as raised:
        from_row(_old_row(plugin("old-bad"), timeout_ms=-5))
    assert raised.value.code == "manifest_invalid_value"


def test_load_rejects_an_old_invalid_row_with_its_code_and_restamps_the_valid_ones() -> None:
    repo = Store.open(":memory:").plugins
    repo.upsert_many([
        _old_row(plugin("old-good")),
        _old_row(plugin("old-bad"), timeout_ms=-5),
        replace(to_row(plugin("other-model")), stamp="0123456789abcdef"),
    ])  # fmt: skip
    registry = Registry(repo)
    failures = registry.load()
    assert [(f.source, f.code) for f in failures] == [("store:old-bad", "manifest_invalid_value")]
    assert registry.restamp() == 2
    stamps = {row.id: row.stamp for row in repo.list()}
    assert stamps == {"old-bad": None, "old-good": DESCRIPTOR_STAMP,
                      "other-model": DESCRIPTOR_STAMP}  # fmt: skip
    # The next start trusts them.
    again = Registry(repo)
    assert [f.source for f in again.load()] == ["store:old-bad"]
    assert again.require("old-good").stored_data is not None
    assert again.require("other-model").stored_data is not None


def test_sync_restamps_the_rows_it_validated() -> None:
    repo = Store.open(":memory:").plugins
    repo.upsert(_old_row(plugin("old-good", source="external")))  # kept: no source re-reads it
    registry = Registry(repo)
    sync_on_start(registry, [])
    assert repo.list()[0].stamp == DESCRIPTOR_STAMP


def test_a_tampered_stamped_row_is_refused_with_its_code_on_first_use(tmp_path: Path) -> None:
    database = tmp_path / "yard.db"
    with Store.open(str(database)) as store:
        store.plugins.upsert(to_row(plugin("tampered")))
    with sqlite3.connect(database) as connection:
        (text,) = connection.execute("SELECT descriptor FROM plugins").fetchone()
        bad = {**json.loads(text), "timeout_ms": "soon"}
        connection.execute("UPDATE plugins SET descriptor = ?", (json.dumps(bad),))
    with Store.open(str(database)) as store:
        registry = Registry.over(store)
        assert registry.load() == ()
        found = registry.require("tampered")
        with pytest.raises(PlugyardError) as raised:
            _ = found.descriptor
        assert raised.value.code == "manifest_invalid_value"


def test_the_store_keeps_stamps_and_restamps_on_either_backend(database_url: str) -> None:
    with Store.open(database_url) as store:
        store.plugins.upsert_many([to_row(plugin("new")), _old_row(plugin("old"))])
        registry = Registry.over(store)
        assert registry.load() == ()
        assert registry.require("new").stored_data is not None  # trusted by its stamp
        assert registry.require("old").stored_data is None  # validated as it was read
        assert registry.restamp() == 1
        assert {r.id: r.stamp for r in store.plugins.list()} == {
            "new": DESCRIPTOR_STAMP, "old": DESCRIPTOR_STAMP}  # fmt: skip


def test_a_shu_plugins_declared_origins_are_listed_with_its_one_source_type() -> None:
    declared = plugin("mail", origins=("gmail", "gmail-label"))
    stored = from_row(to_row(declared))
    expected = {"origins": ["gmail", "gmail-label"], "source_type": "plugin:mail"}
    for shown in (summary(declared), summary(stored)):
        assert {k: shown[k] for k in expected} == expected
    # A plugin that declares none lists neither key: listings of other plugins are as before.
    assert not {"origins", "source_type"} & summary(plugin("calc")).keys()
