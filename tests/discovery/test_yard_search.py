"""The yard builds discovery from its settings and keeps it in step with its registry."""

from __future__ import annotations

from pathlib import Path

from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.query import Filters
from plugyard.yard import Settings, Yard

from .sample_catalog import registered


def yard(tmp_path: Path, embedder: str = "hashing") -> Yard:
    return Yard.from_settings(Settings(database=str(tmp_path / "y.db"), embedder=embedder))


def test_the_embedder_comes_from_the_environment() -> None:
    settings = Settings.from_env({"PLUGYARD_EMBEDDER": "hashing:64", "OLLAMA_HOST": "h:1"})
    assert (settings.embedder, settings.ollama_url) == ("hashing:64", "h:1")
    assert Settings.from_env({}).embedder is None  # → minilm


def test_a_yard_searches_its_bundled_plugins(tmp_path: Path) -> None:
    with yard(tmp_path) as y:
        top = y.search("how many miles is 10 km", k=3)
        assert (top[0].plugin_id, top[0].operation) == ("unit-convert", "convert")
        assert isinstance(y.discovery.embedder, HashingEmbedder)
        kb = y.search("knowledge", k=3, filters=Filters(family="kb"))
        assert sorted(m.plugin_id for m in kb) == ["kb-embed", "kb-lexical"]


def test_a_plugin_registered_later_is_found_at_once(tmp_path: Path) -> None:
    with yard(tmp_path) as y:
        y.search("anything")
        y.registry.register(registered("stocks"))
        assert y.search("latest share price for a ticker", k=1)[0].plugin_id == "stocks"
        y.registry.unregister("stocks")
        assert all(m.plugin_id != "stocks" for m in y.search("share price ticker", k=10))


def test_tools_for_returns_function_definitions(tmp_path: Path) -> None:
    with yard(tmp_path) as y:
        tools = y.tools_for("what time is it in Tokyo", k=1, format="anthropic")
        assert [t["name"] for t in tools] == ["time-zones__now"]
        assert tools[0]["input_schema"]["type"] == "object"


def test_tools_for_strict_returns_openai_strict_definitions(tmp_path: Path) -> None:
    with yard(tmp_path) as y:
        [tool] = y.tools_for("what time is it in Tokyo", k=1, strict=True)
        function = tool["function"]
        assert (function["name"], function["strict"]) == ("time-zones__now", True)
        assert function["parameters"]["additionalProperties"] is False
        assert function["parameters"]["required"] == ["zone"]


def test_a_restart_embeds_nothing_and_another_embedder_embeds_everything(tmp_path: Path) -> None:
    with yard(tmp_path) as y:
        first = y.discovery.start()
        assert first.embedded == len(y.discovery.index) > 18
    with yard(tmp_path) as y:
        assert y.discovery.start().embedded == 0
    with yard(tmp_path, "hashing:64") as y:
        again = y.discovery.start()
        assert again.embedded == len(y.discovery.index)
        assert y.search("convert km to miles", k=1)[0].plugin_id == "unit-convert"


def test_the_relevance_floor_says_nothing_relevant_for_what_no_plugin_does(
    tmp_path: Path,
) -> None:
    """The bundled catalog has no weather, mail or music plugin: with the floor the
    answer is empty; without it, the nearest k as before."""
    with yard(tmp_path, "minilm") as y:
        floor = Filters(relevant_only=True)
        for request in ("weather in lisbon", "send an email to bob", "play some music"):
            assert y.search(request, k=3, filters=floor) == []
            assert len(y.search(request, k=3)) == 3
        kept = y.search("convert 3 km to miles", k=3, filters=floor)
        assert kept and kept[0].plugin_id == "unit-convert" and kept[0].relevant


def test_a_plugin_is_relevant_when_any_of_its_entries_clears_the_floor(tmp_path: Path) -> None:
    """The request "how many inches is 30 cm" is short and mostly symbols: the unit
    converter's operation entry ranks first on meaning but under the floor, while its
    plugin entry names "inches" and "cm" among its units; the plugin is relevant."""
    with yard(tmp_path, "minilm") as y:
        [found] = y.search("how many inches is 30 cm", k=1, filters=Filters(relevant_only=True))
        assert (found.plugin_id, found.operation) == ("unit-convert", "convert")


def test_a_plugin_clears_the_floor_on_one_entrys_words_and_anothers_meaning(
    tmp_path: Path,
) -> None:
    """For "I need 250 grams in ounces" the unit converter's own entry names both units
    (keywords far above the catalog) but is under the floor on meaning, and its
    convert entry is near enough in meaning but names neither unit. Neither entry
    clears the floor alone; the plugin does, on the evidence of both. A keyword with no
    meaning behind it anywhere in the plugin still does not: "France" is among the
    time-zone plugin's words, not what it is about."""
    with yard(tmp_path, "minilm") as y:
        floor = Filters(relevant_only=True)
        [found] = y.search("I need 250 grams in ounces", k=1, filters=floor)
        assert (found.plugin_id, found.operation) == ("unit-convert", "convert")
        assert y.search("Who is the president of France?", k=3, filters=floor) == []


def test_a_number_the_request_states_is_no_evidence_of_relevance(tmp_path: Path) -> None:
    """For "Start a 10 minute timer" the time-zone plugin's texts hold a 10, and nothing
    bundled starts timers. A number is a value, not what a plugin is about."""
    with yard(tmp_path, "minilm") as y:
        assert y.search("Start a 10 minute timer", k=3, filters=Filters(relevant_only=True)) == []


def test_two_words_far_above_the_catalog_clear_a_lower_floor_of_meaning(tmp_path: Path) -> None:
    """The request "500 MB in GB" is short and all symbols: MiniLM puts it nearer the file plugin
    than the unit converter, whose own entry names both units. Two words matched that
    far above the catalog are evidence enough; one ("average") is not."""
    with yard(tmp_path, "minilm") as y:
        floor = Filters(relevant_only=True)
        found = y.search("500 MB in GB", k=3, filters=floor)
        assert [m.plugin_id for m in found] == ["unit-convert"]
