"""The client's tools as discovery ranks them for a request and for each of its parts, and
the yard's operations each part of a request points to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plugyard.discovery.documents import Document
from plugyard.discovery.engine import Match as Hit
from plugyard.discovery.query import Filters, Match, allow_all
from plugyard.routing.ranked import MAX_PARTS, PART_LEAD, Favoured, first, yard_parts
from plugyard.yard import Yard


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"{name} things"}}


TOOLS = (tool("get_weather"), tool("book_flight"), tool("convert"))
REQUEST = "What is the weather in Oslo, and then book me a flight to Rome"
PARTS = ("What is the weather in Oslo", "then book me a flight to Rome")


def ranking(cosines: dict[str, dict[str, float]], irrelevant: Sequence[str] = ()) -> Any:
    def rank(query: str, documents: Sequence[Document]) -> list[Hit]:
        found = cosines[query]
        names = sorted((d.doc_id for d in documents), key=lambda n: -found.get(n, 0.0))
        return [Hit(n, found.get(n, 0.0), 0.0, 0.0, (), cosine=found.get(n, 0.0),
                    relevant=(query, n) not in irrelevant) for n in names]  # fmt: skip

    return rank


def cosines(lead: float) -> dict[str, dict[str, float]]:
    return {REQUEST: {"get_weather": 0.5, "book_flight": 0.4},
            PARTS[0]: {"get_weather": 0.6, "book_flight": 0.1},
            PARTS[1]: {"get_weather": 0.1, "book_flight": 0.4 + lead}}  # fmt: skip


def test_a_part_clearly_nearer_to_another_tool_names_that_tool() -> None:
    found = first(ranking(cosines(PART_LEAD + 0.01)), REQUEST, TOOLS)
    assert found == Favoured("get_weather", parts=("get_weather", "book_flight"))


def test_a_part_hardly_nearer_than_the_whole_request_names_nothing() -> None:
    found = first(ranking(cosines(PART_LEAD - 0.01)), REQUEST, TOOLS)
    assert found is not None and found.parts == ("get_weather",)


def test_a_parts_first_tool_under_the_relevance_floor_is_not_named() -> None:
    rank = ranking(cosines(0.3), irrelevant=[(PARTS[1], "book_flight")])
    found = first(rank, REQUEST, TOOLS)
    assert found is not None and "book_flight" not in found.parts


def test_a_request_of_one_part_names_no_parts_and_a_lone_tool_is_not_split() -> None:
    rank = ranking({"weather in Oslo?": {"get_weather": 0.7}, **cosines(0.3)})
    assert first(rank, "weather in Oslo?", TOOLS) == Favoured("get_weather")
    assert first(rank, REQUEST, TOOLS[:1]) == Favoured("get_weather")


def test_nothing_ranked_favours_nothing() -> None:
    assert first(lambda query, documents: [], REQUEST, TOOLS) is None


def test_a_huge_request_ranks_a_bounded_number_of_parts() -> None:
    asked: list[str] = []

    def rank(query: str, documents: Sequence[Document]) -> list[Hit]:
        asked.append(query)
        return [Hit(d.doc_id, 0.5, 0.0, 0.0, (), cosine=0.5) for d in documents]

    huge = " and then ".join(f"convert {n} km to miles" for n in range(1000))
    assert first(rank, huge, TOOLS) is not None
    assert len(asked) == 1 + MAX_PARTS


def test_each_part_of_a_yard_request_names_its_plugins_first_operation(yard: Yard) -> None:
    search = _by_part(yard, {"Convert 5 km to miles": "unit-convert",
                             "tell me the time in Tokyo": "time-zones"})  # fmt: skip
    found = yard_parts(search, "Convert 5 km to miles and tell me the time in Tokyo", allow_all)
    assert [c.plugin_id for c in found] == ["unit-convert", "time-zones"]
    assert found[0].operation.id == "convert"


def test_a_request_split_where_it_is_still_one_need_plans_nothing(yard: Yard) -> None:
    search = _by_part(yard, {"My call is at 10:00 in Chicago": "time-zones",
                             "what time is that in Tokyo?": "time-zones"})  # fmt: skip
    request = "My call is at 10:00 in Chicago; what time is that in Tokyo?"
    assert yard_parts(search, request, allow_all) == ()
    assert yard_parts(search, "convert 5 km to miles", allow_all) == ()


def test_a_part_whose_operations_the_caller_may_not_call_plans_nothing(yard: Yard) -> None:
    search = _by_part(yard, {"Convert 5 km to miles": "unit-convert",
                             "tell me the time in Tokyo": "time-zones"})  # fmt: skip

    def no_conversions(plugin: str, operation: str) -> bool:
        return plugin != "unit-convert"

    request = "Convert 5 km to miles and tell me the time in Tokyo"
    assert yard_parts(search, request, no_conversions) == ()


def _by_part(yard: Yard, plugins: dict[str, str]) -> Any:
    """A search that finds the plugin each part names (and time zones for anything
    else), honouring the caller's rights as discovery's filter does."""

    def search(query: str, k: int, filters: Filters) -> list[Match]:
        plugin = yard.registry.find(plugins.get(query, "time-zones"))
        assert plugin is not None
        ops = [op.id for op in plugin.descriptor.operations]
        if filters.can_see is not None and not any(filters.can_see(plugin.id, o) for o in ops):
            return []
        return [Match(plugin, None, 3.0, "test")][:k]

    return search
