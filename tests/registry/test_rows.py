"""Every descriptor the readers produce survives the store unchanged."""

from __future__ import annotations

from pathlib import Path

from plugyard.errors import ManifestError
from plugyard.manifest.load import load_file
from plugyard.registry.model import RegisteredPlugin, content_hash
from plugyard.registry.rows import from_row, to_row
from plugyard.store.store import Store

ROOT = Path(__file__).resolve().parents[2]
CORPUS = [ROOT / "tests" / "manifest" / "fixtures", ROOT / "tests" / "registry" / "fixtures",
          ROOT / "examples"]  # fmt: skip


def corpus() -> list[RegisteredPlugin]:
    plugins: dict[str, RegisteredPlugin] = {}
    for root in CORPUS:
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in {".yaml", ".yml", ".json", ".py"}:
                continue
            if path.name in {"config.yml", "config.yaml", "catalog.json"}:
                continue
            try:
                document = load_file(path)
            except ManifestError:
                continue  # refused on purpose: the manifest tests cover those
            for descriptor in document.plugins:
                plugins.setdefault(
                    descriptor.id,
                    RegisteredPlugin.of(descriptor, "folder", location=str(path.parent),
                                        manifest_path=str(path), dialect=document.dialect),
                )  # fmt: skip
    return list(plugins.values())


def test_the_corpus_is_large_enough_to_mean_something() -> None:
    plugins = corpus()
    assert len(plugins) >= 30
    assert {p.dialect for p in plugins} >= {"olo", "homeclaw", "mrp", "shu"}
    assert {p.family for p in plugins} >= {"tool", "sd", "kb", "gs", "val", "plan"}


def test_every_descriptor_survives_a_row_round_trip() -> None:
    for plugin in corpus():
        back = from_row(to_row(plugin))
        assert back == plugin, plugin.id
        assert content_hash(back.descriptor) == plugin.content_hash


def test_every_descriptor_survives_the_store(database_url: str) -> None:
    plugins = corpus()
    with Store.open(database_url) as store:
        store.plugins.upsert_many([to_row(p) for p in plugins])
        for row in store.plugins.list():
            back = from_row(row)
            original = next(p for p in plugins if p.id == row.id)
            assert back.descriptor == original.descriptor, row.id
            assert content_hash(back.descriptor) == original.content_hash, row.id
