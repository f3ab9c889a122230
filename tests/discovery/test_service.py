"""search and tools_for: plugin-level matches with their best operation, filters and the
caller's rights, tool definitions, and bad input refused with stable codes."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard.discovery.documents import Document
from plugyard.discovery.query import MAX_K, MAX_QUERY_CHARS, Filters, check_query
from plugyard.errors import ExportError, PlugyardError
from plugyard.manifest.exporters.functions import export_tools
from plugyard.manifest.exporters.openai_strict import strict_tools
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry

from .sample_catalog import CountingEmbedder, registered, registry, service


def ids(matches: list[Any]) -> list[str]:
    return [m.plugin_id for m in matches]


def test_matches_are_plugins_with_their_best_operation_score_and_why() -> None:
    top = service().search("forecast of rain and wind for tomorrow", k=3)
    assert top[0].plugin_id == "weather"
    assert top[0].operation == "forecast"
    assert top[0].plugin.descriptor.name == "Weather"
    assert "forecast" in top[0].why
    assert [m.score for m in top] == sorted((m.score for m in top), reverse=True)
    assert len(set(ids(top))) == len(top) == 3


def test_a_plugin_with_one_operation_names_it_even_when_matched_as_a_whole() -> None:
    top = service().search("pdf documents", k=1)
    assert (top[0].plugin_id, top[0].operation) == ("pdf-reader", "execute")


def test_a_plugin_without_operations_matches_as_a_whole_and_gives_no_tool() -> None:
    svc = service()
    top = svc.search("translate text between languages", k=1)
    assert (top[0].plugin_id, top[0].operation) == ("legacy-translate", None)
    assert top[0].why.startswith("plugin: ")
    assert svc.tools_for("translate text between languages", k=1) == []


def test_filters_by_family_and_placement_capability() -> None:
    svc = service()
    kb = svc.search("weather forecast", k=5, filters=Filters(family="kb"))
    assert ids(kb) == ["notes-kb"]
    both = svc.search("notes", k=5, filters=Filters(family=("kb", "tool")))
    assert "notes-kb" in ids(both)
    model = svc.search("pipeline", k=5, filters=Filters(capability="MODEL"))
    # "observer" lists ALL, so it may stand under MODEL too.
    assert sorted(ids(model)) == ["observer", "weather"]


def test_unavailable_plugins_are_left_out_unless_asked_for() -> None:
    reg = registry()
    svc = service(reg)
    reg.set_availability("stocks", False, "market data feed down")
    assert "stocks" not in ids(svc.search("share price", k=5))
    shown = svc.search("share price", k=5, filters=Filters(include_unavailable=True))
    assert shown[0].plugin_id == "stocks"
    assert shown[0].plugin.available is False
    reg.set_availability("stocks", True)
    assert svc.search("share price", k=1)[0].plugin_id == "stocks"


def test_a_caller_never_sees_what_it_may_not_call() -> None:
    svc = service()

    def can_see(plugin_id: str, operation: str | None) -> bool:
        return (plugin_id, operation) != ("stocks", "quote") and plugin_id != "weather"

    rights = Filters(can_see=can_see)
    top = svc.search("latest share price for AAPL", k=5, filters=rights)
    assert "weather" not in ids(top)
    stocks = next(m for m in top if m.plugin_id == "stocks")
    assert stocks.operation == "news"
    tools = svc.tools_for("latest share price for AAPL", k=5, filters=rights)
    assert "stocks__quote" not in {t["function"]["name"] for t in tools}


def test_a_plugin_whose_every_operation_is_closed_is_not_shown() -> None:
    def can_see(plugin_id: str, operation: str | None) -> bool:
        return plugin_id != "pdf-reader" or operation is None

    top = service().search("pdf documents", k=5, filters=Filters(can_see=can_see))
    assert "pdf-reader" not in ids(top)


def test_k_larger_than_the_catalog_returns_every_plugin_once() -> None:
    assert sorted(ids(service().search("anything at all", k=50))) == sorted(
        ["weather", "stocks", "pdf-reader", "notes-kb", "observer", "legacy-translate"]
    )


def test_an_empty_registry_answers_an_empty_list() -> None:
    assert service(Registry()).search("weather") == []


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_tools_for_gives_definitions_of_just_the_matched_operations(fmt: str) -> None:
    tools = service().tools_for("forecast rain for Paris", k=1, format=fmt)
    assert len(tools) == 1
    full = {t["name"] if fmt != "openai" else t["function"]["name"]: t for t in tools}
    expected = export_tools([registered("weather").descriptor], fmt)
    wanted = [t for t in expected if "forecast" in str(t)]
    assert list(full.values()) == wanted[:1]


def test_tools_for_strict_gives_the_strict_form_of_the_same_tools() -> None:
    svc = service()
    plain = svc.tools_for("forecast rain for Paris", k=2)
    strict = svc.tools_for("forecast rain for Paris", k=2, strict=True)
    assert strict == strict_tools(plain, "openai")
    assert all(isinstance(t["function"]["strict"], bool) for t in strict)
    anthropic = svc.tools_for("forecast rain for Paris", k=2, format="anthropic", strict=True)
    assert anthropic == svc.tools_for("forecast rain for Paris", k=2, format="anthropic")


def test_tools_for_names_are_unique_and_short() -> None:
    tools = service().tools_for("anything", k=10)
    names = [t["function"]["name"] for t in tools]
    assert len(names) == len(set(names)) >= 5
    assert all(len(n) <= 64 for n in names)


def test_an_unknown_tool_format_is_refused() -> None:
    with pytest.raises(ExportError) as err:
        service().tools_for("weather", format="gemini")
    assert err.value.code == "export_unsupported"


@pytest.mark.parametrize(
    ("query", "k", "filters"),
    [
        ("", 5, None),
        ("   \n\t", 5, None),
        (None, 5, None),
        (42, 5, None),
        (b"weather", 5, None),
        ("weather", 0, None),
        ("weather", MAX_K + 1, None),
        ("weather", True, None),
        ("weather", 2.5, None),
        ("weather", 5, Filters(family="robots")),
        ("weather", 5, Filters(family=())),
    ],
)
def test_bad_input_is_refused_with_invalid_query(query: Any, k: Any, filters: Any) -> None:
    embedder = CountingEmbedder()
    svc = service(embedder=embedder)
    before = embedder.texts
    with pytest.raises(PlugyardError) as err:
        svc.search(query, k, filters)
    assert err.value.code == "invalid_query"
    assert err.value.http_status == 400
    assert embedder.texts == before  # refused before any work


def test_a_huge_query_is_cut_not_refused() -> None:
    huge = "weather forecast " * 100_000
    cut = check_query(huge)
    assert len(cut) <= MAX_QUERY_CHARS
    assert huge.startswith(cut + " ")  # at a word boundary
    assert service().search(huge, k=1)[0].plugin_id == "weather"


def test_an_unbroken_huge_query_is_cut_at_the_cap() -> None:
    assert check_query("x" * 50_000) == "x" * MAX_QUERY_CHARS


def test_many_matching_operations_of_one_plugin_do_not_crowd_out_the_others() -> None:
    ops = [
        {"id": f"repo_{i}", "description": f"GitHub repository action number {i}."}
        for i in range(12)
    ]
    reg = registry()
    reg.register(
        RegisteredPlugin.of(
            PluginDescriptor.model_validate(
                {"id": "github", "name": "GitHub", "operations": ops}, strict=False
            ),
            "catalog",
        )
    )
    top = service(reg).search("github repository action", k=3)
    assert len(top) == 3 == len(set(ids(top)))
    assert top[0].plugin_id == "github"


def test_asking_the_same_question_twice_embeds_it_once() -> None:
    embedder = CountingEmbedder()
    svc = service(embedder=embedder)
    svc.search("share price")
    before = embedder.texts
    svc.search("share price")
    svc.tools_for("share price")
    assert embedder.texts == before


# ------------------------------------------------------------------ documents outside the catalog

CLIENT_TOOLS = (
    Document("get_weather", "get weather", "The current weather and forecast for a city"),
    Document("book_flight", "book flight", "Book a flight between two airports"),
    Document("convert_currency", "convert currency", "Convert an amount between currencies"),
)


def test_documents_outside_the_catalog_are_ranked_for_the_query() -> None:
    ranked = service().rank("book me a flight from Oslo to Rome", CLIENT_TOOLS)
    assert ranked[0].doc_id == "book_flight"
    assert sorted(h.doc_id for h in ranked) == sorted(d.doc_id for d in CLIENT_TOOLS)
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)


def test_ranking_leaves_the_catalog_alone() -> None:
    svc = service()
    svc.rank("book me a flight", CLIENT_TOOLS)
    assert "book_flight" not in {m.operation for m in svc.search("book me a flight", k=20)}


def test_the_same_documents_ranked_again_are_not_embedded_again() -> None:
    embedder = CountingEmbedder()
    svc = service(embedder=embedder)
    svc.rank("weather in Oslo", CLIENT_TOOLS)
    first = embedder.texts
    svc.rank("euros in dollars", CLIENT_TOOLS[::-1])
    assert embedder.texts - first <= 2  # the new query only (and its content words)


def test_nothing_to_rank_or_no_query_ranks_nothing() -> None:
    assert service().rank("weather", ()) == []
    assert service().rank("  ", CLIENT_TOOLS) == []
