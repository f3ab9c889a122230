"""The index follows the registry: built at start, upserted by content hash on every
event, entries removed with their plugin, vectors kept and reused per embedder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plugyard.discovery.embedders import HashingEmbedder, Vectors
from plugyard.discovery.index import BATCH, MANY, SyncedIndex
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import SqlVectorRepository
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.store.store import Store

from .sample_catalog import DESCRIPTORS, CountingEmbedder, registered, registry, service


class Threads(HashingEmbedder):
    """Hashing vectors, noting how many threads each bulk call was allowed."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.bulk: list[int] = []
        self.plain = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.plain += 1
        return super().embed(texts)

    def embed_bulk(self, texts: Sequence[str], workers: int) -> Vectors:
        self.bulk.append(workers)
        return super().embed(texts)


class Asked:
    def __init__(self, cores: int) -> None:
        self.cores = cores
        self.times = 0

    def __call__(self) -> int:
        self.times += 1
        return self.cores


def copies(n: int) -> list[RegisteredPlugin]:
    """`n` plugins of three entries each (weather and its two operations)."""
    return [
        RegisteredPlugin.of(
            PluginDescriptor.model_validate(
                {**DESCRIPTORS["weather"], "id": f"weather-{i}", "name": f"Weather {i}"},
                strict=False,
            ),
            "catalog",
        )
        for i in range(n)
    ]


def entries(svc: DiscoveryService) -> set[str]:
    return set(svc.index.hashes())


def test_the_index_holds_every_plugin_and_operation_of_the_registry() -> None:
    svc = service()
    assert len(svc.index) == 6 + 7  # six plugins, seven operations
    assert {"weather", "weather/forecast", "weather/current", "legacy-translate"} <= entries(svc)
    assert svc.search("share price of a ticker")[0].plugin_id == "stocks"


def test_an_unchanged_registration_embeds_nothing() -> None:
    embedder = CountingEmbedder()
    reg = registry()
    svc = service(reg, embedder)
    done = embedder.texts
    reg.register(registered("weather", version="2.0.0"))  # text unchanged
    assert reg.find("weather").descriptor.version == "2.0.0"  # type: ignore[union-attr]
    assert embedder.texts == done
    assert svc.index.plugin("weather").descriptor.version == "2.0.0"  # type: ignore[union-attr]


def test_a_changed_plugin_is_re_embedded_and_found_by_its_new_text() -> None:
    embedder = CountingEmbedder()
    reg = registry()
    vectors = SqlVectorRepository(Store.open(":memory:"))
    svc = service(reg, embedder, vectors)
    before = svc.index.hashes()
    stored_before = vectors.load(embedder.identity)
    reg.register(registered("notes-kb", description="Searches scanned invoices and receipts."))
    after = svc.index.hashes()
    changed = {d for d in after if after[d] != before[d]}
    assert changed == {"notes-kb", "notes-kb/retrieve"}
    assert vectors.load(embedder.identity)["notes-kb"][0] == after["notes-kb"]
    assert vectors.load(embedder.identity)["weather"][0] == stored_before["weather"][0]
    assert svc.search("scanned invoices and receipts")[0].plugin_id == "notes-kb"


def test_a_removed_plugin_takes_its_operation_entries_and_vectors_along() -> None:
    reg = registry()
    vectors = SqlVectorRepository(Store.open(":memory:"))
    svc = service(reg, vectors=vectors)
    reg.unregister("weather")
    assert not any(d.startswith("weather") for d in entries(svc))
    assert not any(d.startswith("weather") for d in vectors.doc_ids())
    assert all(m.plugin_id != "weather" for m in svc.search("weather forecast rain", k=10))


def test_an_operation_dropped_by_an_update_leaves_the_index() -> None:
    reg = registry()
    svc = service(reg)
    weather = DESCRIPTORS["weather"]
    reg.register(registered("weather", operations=weather["operations"][:1]))
    assert "weather/current" not in entries(svc)
    assert "weather/forecast" in entries(svc)


def test_a_restart_reuses_stored_vectors_and_embeds_nothing(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    with Store.open(db) as store:
        reg = Registry.over(store)
        reg.register_many([registered(i) for i in DESCRIPTORS])
        first = DiscoveryService(reg, CountingEmbedder(), SqlVectorRepository(store))
        assert first.start().embedded == 13
        first.close()
    with Store.open(db) as store:
        reg = Registry.over(store)
        reg.load()
        embedder = CountingEmbedder()
        again = DiscoveryService(reg, embedder, SqlVectorRepository(store))
        assert again.start().embedded == 0
        assert embedder.texts == 0
        assert again.search("company news")[0].plugin_id == "stocks"


def test_a_service_given_no_vectors_keeps_them_in_a_store_of_its_own() -> None:
    embedder = CountingEmbedder()
    svc = DiscoveryService(registry(), embedder)
    assert svc.start().embedded == 13
    done = embedder.texts
    assert svc.start().embedded == 0  # the second build reuses what the first stored
    assert embedder.texts == done
    assert len(svc.vectors.doc_ids()) == 13


def test_another_embedder_re_embeds_everything_and_replaces_the_vectors() -> None:
    reg = registry()
    vectors = SqlVectorRepository(Store.open(":memory:"))
    small = HashingEmbedder(dim=64)
    service(reg, small, vectors).close()
    assert vectors.embedders() == {small.identity}
    large = CountingEmbedder(dim=96)
    svc = service(reg, large, vectors)
    assert large.identity != small.identity
    assert large.texts > 0
    assert vectors.embedders() == {large.identity}
    assert svc.index.engine.vector("weather").shape == (96,)
    assert svc.search("weather forecast")[0].plugin_id == "weather"


def test_a_rebuild_embeds_everything_again_and_reports_progress() -> None:
    embedder = CountingEmbedder()
    svc = service(embedder=embedder)
    seen: list[tuple[int, int]] = []
    changes = svc.rebuild(lambda done, total: seen.append((done, total)))
    assert changes.embedded == 13
    assert seen[-1] == (13, 13)
    assert svc.search("pdf tables")[0].plugin_id == "pdf-reader"


def test_vectors_of_plugins_gone_while_stopped_are_deleted_at_start() -> None:
    vectors = SqlVectorRepository(Store.open(":memory:"))
    service(registry(), vectors=vectors).close()
    service(registry("weather"), vectors=vectors)
    assert vectors.doc_ids() == {"weather", "weather/forecast", "weather/current"}


def test_a_closed_service_no_longer_follows_the_registry() -> None:
    reg = registry("weather")
    svc = service(reg)
    svc.close()
    reg.register(registered("stocks"))
    assert "stocks" not in entries(svc)


def test_an_event_during_a_search_is_applied_before_the_next_one() -> None:
    reg = registry("weather")
    svc = service(reg)
    with svc._lock:  # a search in progress on another thread
        reg.register(registered("stocks"))
        assert "stocks" not in entries(svc)
    assert svc.search("share price")[0].plugin_id == "stocks"


def test_a_build_embeds_on_the_threads_its_cores_allow_asked_once() -> None:
    embedder, asked = Threads(), Asked(2)
    index = SyncedIndex(embedder, cores=asked)
    changes = index.sync(copies(100))  # 300 entries: two chunks of BATCH
    assert changes.embedded == 300 > BATCH
    assert asked.times == 1 and embedder.bulk == [2, 2]
    assert embedder.plain == 0
    # A search embeds its query on one thread, through the plain call.
    index.search("weather forecast", 3, None)
    assert embedder.plain >= 1 and asked.times == 1


def test_a_few_entries_to_embed_do_not_watch_the_machine() -> None:
    embedder, asked = Threads(), Asked(2)
    index = SyncedIndex(embedder, cores=asked)
    index.sync(copies(MANY // 3 - 1))
    index.upsert(copies(MANY)[-1])
    assert asked.times == 0 and embedder.bulk == [] and embedder.plain == 2
