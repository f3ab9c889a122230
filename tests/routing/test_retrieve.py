"""Retrieval's candidates: every operation of a matched plugin, the one that does the
job first when the request states a value, and only what the caller may call."""

from __future__ import annotations

from collections.abc import Sequence

from plugyard.discovery.query import Filters, Match, allow_all
from plugyard.manifest.model import Operation
from plugyard.routing.offer import Offer
from plugyard.routing.retrieve import OFFER_GAP, SIBLING_GAP, retrieve, siblings
from plugyard.yard import Yard


def _search(yard: Yard, *hits: tuple[str, str | None, float]):  # type: ignore[no-untyped-def]
    """A search that answers ``hits`` (plugin, operation discovery named, score)."""

    def search(query: str, k: int, filters: Filters) -> list[Match]:
        found = []
        for plugin_id, operation, score in hits:
            plugin = yard.registry.find(plugin_id)
            assert plugin is not None
            found.append(Match(plugin, operation, score, "test"))
        return found[:k]

    return search


def _ops(yard: Yard, plugin_id: str) -> Sequence[Operation]:
    plugin = yard.registry.find(plugin_id)
    assert plugin is not None
    return plugin.descriptor.operations


def _keys(found: Sequence[object]) -> list[tuple[str, str]]:
    return [(c.plugin_id, c.operation.id) for c in found]  # type: ignore[attr-defined]


def test_a_matched_listing_entry_still_offers_the_operation_that_does_the_job(
    yard: Yard,
) -> None:
    search = _search(yard, ("unit-convert", "list_units", 4.0))
    found = retrieve(search, "6 ft to meters", 5, allow_all)
    # list_units could not take "6 ft" (its one parameter is an enum): not offered
    assert _keys(found) == [("unit-convert", "convert")]
    assert found[0].score == 4.0


def test_a_request_for_a_list_keeps_the_listing_first(yard: Yard) -> None:
    search = _search(yard, ("unit-convert", "list_units", 4.0))
    found = retrieve(search, "Which temperature units can you convert?", 5, allow_all)
    assert _keys(found)[0] == ("unit-convert", "list_units")


def test_words_only_one_sibling_has_choose_it_over_discoverys_pick(yard: Yard) -> None:
    ops = siblings("tell me the current UTC time", _ops(yard, "time-zones"), "convert_time")
    assert ops[0].id == "now"


def test_with_nothing_telling_discoverys_pick_comes_first(yard: Yard) -> None:
    ops = siblings("zzz qqq", _ops(yard, "time-zones"), "list_zones")
    assert ops[0].id == "list_zones"


def test_a_sibling_needing_a_kind_of_value_the_request_never_states_comes_after(
    yard: Yard,
) -> None:
    # "hour" is a word of convert_time's examples, but it needs a time nobody gave
    ops = siblings("I'm calling Honolulu; what hour is it for them?",
                   _ops(yard, "time-zones"), "convert_time")  # fmt: skip
    assert ops[0].id == "now"
    stated = siblings("what hour is it in Honolulu at 9am in Oslo?", _ops(yard, "time-zones"))
    assert stated[0].id == "convert_time"
    # the query needs a JSON document to query; the request writes none
    ops = siblings("Can items[*].name be parsed as JMESPath?", _ops(yard, "json-query"), "query")
    assert ops[0].id == "check_expression"


def test_another_plugins_close_match_comes_between_siblings(yard: Yard) -> None:
    search = _search(yard, ("unit-convert", "convert", 3.0), ("calculator", None, 2.9))
    found = retrieve(search, "convert feet to meters", 5, allow_all)
    assert _keys(found) == [
        ("unit-convert", "convert"),
        ("calculator", "execute"),
        ("unit-convert", "list_units"),
    ]
    assert found[2].score == 3.0 - SIBLING_GAP


def test_an_operation_that_could_not_take_the_stated_value_is_not_offered(yard: Yard) -> None:
    search = _search(yard, ("unit-convert", "list_units", 4.0))
    assert _keys(retrieve(search, "how many pounds is 70 kg?", 5, allow_all)) == [
        ("unit-convert", "convert")
    ]
    # a number said as a word: "a quarter pound" is 0.25 lb
    assert _keys(retrieve(search, "ounces in a quarter pound", 5, allow_all)) == [
        ("unit-convert", "convert")
    ]
    # Without a value to work on, the listing is still offered.
    assert ("unit-convert", "list_units") in _keys(
        retrieve(search, "which units can you convert", 5, allow_all)
    )


def test_operations_the_caller_may_not_call_are_never_offered(yard: Yard) -> None:
    search = _search(yard, ("unit-convert", "list_units", 4.0))

    def can_see(plugin_id: str, operation: str | None) -> bool:
        return operation != "convert"

    found = retrieve(search, "6 ft to meters", 5, can_see)
    assert _keys(found) == [("unit-convert", "list_units")]


def test_at_most_k_candidates(yard: Yard) -> None:
    search = _search(yard, ("time-zones", None, 4.0), ("unit-convert", None, 3.0))
    assert len(retrieve(search, "9am in Lisbon", 2, allow_all)) == 2


def test_nothing_relevant_offers_nothing(yard: Yard) -> None:
    assert retrieve(_search(yard), "write me a poem", 5, allow_all) == ()


def test_a_match_far_behind_the_best_is_not_offered(yard: Yard) -> None:
    search = _search(yard, ("unit-convert", "convert", 5.0), ("calculator", None, 5.0 - OFFER_GAP),
                     ("time-zones", None, 4.9 - OFFER_GAP))  # fmt: skip
    keys = _keys(retrieve(search, "convert 350 F to C", 5, allow_all))
    assert ("calculator", "execute") in keys
    assert all(plugin != "time-zones" for plugin, _ in keys)


def test_a_plugins_description_is_offered_once_with_its_first_operation(yard: Yard) -> None:
    search = _search(yard, ("time-zones", "convert_time", 4.0))
    offer = Offer.of(retrieve(search, "what time is it in Tokyo", 5, allow_all))
    plugin = yard.registry.find("time-zones")
    assert plugin is not None and len(offer.tools) == 3
    said = [t["function"]["description"] for t in offer.tools]
    context = plugin.descriptor.description.strip()
    assert context in said[0]
    assert all(context not in text and text for text in said[1:])


def test_what_an_operation_returns_tells_siblings_apart(yard: Yard) -> None:
    """Only the checker's output description says "valid", as the request does; the
    query operation's example mentions items, which the request quotes. Even, so
    discovery's pick decides, where "items" alone put the query first."""
    request = 'Is "items[0" a valid JMESPath expression?'
    ops = siblings(request, _ops(yard, "json-query"), "check_expression")
    assert ops[0].id == "check_expression"


def test_with_no_value_stated_the_sibling_it_can_fill_comes_first(yard: Yard) -> None:
    """The request "What time is it in Paris?" names a zone and no time: `now` needs only the zone,
    `convert_time` a time as well; the request's words tell them apart no better."""
    ops = siblings("What time is it in Paris?", _ops(yard, "time-zones"), "convert_time")
    assert ops[0].id == "now"
    # A stated time makes it a job for the one that takes it, noon included.
    for request in ("If it's noon in Tokyo, what time is it in London?", "9:30 in Paris"):
        assert siblings(request, _ops(yard, "time-zones"), "convert_time")[0].id == "convert_time"


def test_a_place_the_request_names_does_not_tell_siblings_apart(yard: Yard) -> None:
    """Cairo is in an example of `convert_time` and Mumbai in one of `list_zones`; a
    city the request names is a value, not a word about which operation is meant."""
    ops = _ops(yard, "time-zones")
    assert siblings("what's the IANA zone for Cairo", ops, "convert_time")[0].id != "convert_time"
    assert siblings("I need the current time in Mumbai", ops, "list_zones")[0].id == "now"


def test_a_reasoning_familys_methods_are_never_offered_to_a_request(yard: Yard) -> None:
    # kb-lexical's own example: discovery finds the KB plugin, whose methods (retrieval
    # and its ingestion hooks) take the reasoning flow's envelope; `reason` runs them.
    query = "Find the passages in my uploaded notes that mention the termination clause"
    found = yard.search(query, 5, Filters(relevant_only=True))
    assert any(m.plugin.descriptor.family == "kb" for m in found)
    offered = retrieve(yard.search, query, 5, allow_all)
    assert all(c.descriptor is not None and c.descriptor.family == "tool" for c in offered)


def test_now_is_no_time_of_day_that_convert_time_would_need(yard: Yard) -> None:
    # convert_time takes "now" and its examples say "clock"-like words, but a request
    # for the time right now in one place is `now`'s
    ops = siblings("what does the clock say in Oslo right now", _ops(yard, "time-zones"),
                   "convert_time")  # fmt: skip
    assert ops[0].id == "now"


def test_a_sibling_taking_a_kind_of_value_the_request_states_comes_first(yard: Yard) -> None:
    ops = _ops(yard, "json-query")
    written = 'JMESPath for the ids in {"id": [1, 2]}'
    assert siblings(written, ops, "check_expression")[0].id == "query"
    # an expression's index is no document: "[-1]" is JSON, glued to the expression
    indexed = "is sort_by(xs, &n)[-1].n valid JMESPath?"
    assert siblings(indexed, ops, "check_expression")[0].id == "check_expression"


def test_a_parameters_description_does_not_tell_siblings_apart(yard: Yard) -> None:
    # `now`'s zone is described as "an IANA zone", which says what to write, not what
    # `now` does; listing IANA names is `list_zones`' job
    ops = siblings("what are the IANA names in Chile", _ops(yard, "time-zones"), "now")
    assert ops[0].id == "list_zones"


def test_a_near_tie_goes_to_the_candidate_taking_the_document_the_request_writes(
    yard: Yard,
) -> None:
    query = 'From {"rows": [{"city": "Oslo"}]} which cities are listed? Use JMESPath'
    near = _search(yard, ("time-zones", "list_zones", 3.07), ("json-query", "query", 3.03))
    assert _keys(retrieve(near, query, 5, allow_all))[0] == ("json-query", "query")
    far = _search(yard, ("time-zones", "list_zones", 3.6), ("json-query", "query", 3.03))
    assert _keys(retrieve(far, query, 5, allow_all))[0] == ("time-zones", "list_zones")
    # a list of names is no document: text-extract's `kinds` takes none
    texts = _search(yard, ("time-zones", "now", 3.05), ("text-extract", "extract", 3.0))
    keys = _keys(retrieve(texts, 'emails in {"a": "x@y.z"}', 5, allow_all))
    assert keys[:2] == [("time-zones", "now"), ("text-extract", "extract")]
