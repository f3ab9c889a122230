"""Discovery that learns: search ids, accepted calls and feedback teach the memory
channel, within the guards — a subject's cap, one record per request, named subjects
only, rights checked — and one subject's flood cannot reach another's results."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard.discovery.learning import Learning, LearningSettings
from plugyard.discovery.query import Filters, Matches
from plugyard.discovery.remembered import SqlRememberedRepository
from plugyard.discovery.service import DiscoveryService
from plugyard.errors import PlugyardError
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.store.store import Store

from .sample_catalog import CountingEmbedder, registered, registry, service

#: A catalog wide enough that a top 5 means something: (id, description, examples).
WIDE: list[tuple[str, str, tuple[str, ...]]] = [
    ("weather", "Weather forecasts, rain and temperature for a city.",
     ("will it rain in Paris tomorrow", "temperature in Oslo this weekend")),
    ("stocks", "Share prices and market quotes for a ticker.",
     ("price of AAPL shares", "how did the Nasdaq close today")),
    ("flights", "Searches airline flights between airports.",
     ("cheapest flight from Rome to Berlin", "flights to Tokyo next Monday")),
    ("recipes", "Cooking recipes by ingredient and cuisine.",
     ("a vegetarian lasagna recipe", "what can I cook with eggs and spinach")),
    ("translate", "Translates text between languages.",
     ("translate good morning into Spanish", "what does danke mean in English")),
    ("calendar", "Creates and lists calendar events and meetings.",
     ("schedule a meeting with Ana on Friday", "what is on my calendar tomorrow")),
    ("email", "Sends and searches email messages.",
     ("send an email to the team about the launch", "find the invoice email from March")),
    ("maps", "Directions, distances and places on a map.",
     ("directions from the station to the museum", "how far is Lyon from Geneva")),
    ("news", "Latest news headlines by topic.",
     ("latest headlines about elections", "technology news today")),
    ("currency", "Converts amounts between currencies.",
     ("convert 100 dollars to euros", "yen to pound exchange rate")),
    ("timer", "Sets timers and alarms.",
     ("set a timer for ten minutes", "wake me up at 7 am")),
    ("music", "Plays songs, albums and playlists.",
     ("play some jazz", "put on the latest Adele album")),
    ("hotels", "Finds and books hotel rooms.",
     ("a hotel near the Louvre for two nights", "book a room in Madrid")),
    ("pdf", "Extracts text and tables from PDF files.",
     ("read the tables of this pdf", "extract text from the contract pdf")),
    ("sports", "Scores and fixtures of sports leagues.",
     ("who won the football match last night", "next Lakers game")),
    ("shopping", "Compares product prices across online shops.",
     ("cheapest price for a 4k monitor", "compare prices of running shoes")),
    ("jokes", "Tells jokes and puns.", ("tell me a joke", "a pun about cats")),
    ("dictionary", "Definitions and synonyms of English words.",
     ("define serendipity", "a synonym for happy")),
    ("fitness", "Workout plans and exercise tracking.",
     ("a 20 minute home workout", "log my morning run")),
    ("crypto", "Cryptocurrency prices and wallets.",
     ("bitcoin price now", "how much is ether worth")),
]  # fmt: skip


def wide_registry(examples: bool = True) -> Registry:
    reg = Registry()
    plugins = []
    for plugin_id, description, said in WIDE:
        data: dict[str, Any] = {
            "id": plugin_id,
            "name": plugin_id.title(),
            "description": description,
            "operations": [{"id": "run", "description": description}],
        }
        if examples:
            data["operations"][0]["examples"] = list(said)
        plugins.append(
            RegisteredPlugin.of(PluginDescriptor.model_validate(data, strict=False), "catalog")
        )
    reg.register_many(plugins)
    return reg


def wide_service(**settings: Any) -> DiscoveryService:
    embedder = CountingEmbedder()
    learning = Learning(embedder, settings=LearningSettings(**settings))
    svc = DiscoveryService(wide_registry(), embedder, learning=learning)
    svc.start()
    return svc


def top(svc: DiscoveryService, query: str, subject: str | None = None, k: int = 5) -> list[str]:
    return [m.plugin_id for m in svc.search(query, k, subject=subject)]


def test_every_search_returns_a_search_id() -> None:
    svc = service()
    first, second = svc.search("weather tomorrow"), svc.search("weather tomorrow")
    assert isinstance(first, Matches)
    assert first.search_id and second.search_id and first.search_id != second.search_id


def test_manifest_examples_lift_their_operation_and_say_so() -> None:
    query = "wake me up at 7 am tomorrow"
    bare = DiscoveryService(wide_registry(examples=False), CountingEmbedder())
    taught = wide_service()
    plain = bare.search(query, k=20)
    best = taught.search(query, k=20)
    assert [m.plugin_id for m in best].index("timer") == 0
    assert [m.plugin_id for m in plain].index("timer") > 0
    assert (best[0].operation, best[0].relevant) == ("run", True)
    assert "answered 1 similar requests" in best[0].why
    assert all("similar requests" not in m.why for m in plain)


def test_fewer_than_five_tools_with_memory_keep_memory_silent() -> None:
    reg = registry()
    reg.register(
        registered(
            "stocks",
            operations=[{"id": "news", "description": "Recent news about a company.",
                         "examples": ["what did the Tesla board say"]}],
        )
    )  # fmt: skip
    svc = service(reg)
    assert all("similar" not in m.why for m in svc.search("what did the Tesla board say"))


def test_feedback_teaches_the_subjects_query_to_the_tool() -> None:
    svc = wide_service(quorum=1)
    query = "is it going to snow in the Alps"
    before = svc.search(query, k=20, subject="ana")
    rank = [m.plugin_id for m in before].index("fitness")
    assert rank > 3
    done = svc.feedback(before.search_id, "fitness", "run", helpful=True, subject="ana")
    assert done.to_dict() == {"recorded": True, "reason": "recorded"}
    assert svc.remembered_count("fitness", "run") == 3  # two examples and this request
    assert "fitness" in top(svc, query, k=3)
    # helpful: false takes the subject's own record back.
    again = svc.search(query, subject="ana")
    undone = svc.feedback(again.search_id, "fitness", "run", helpful=False, subject="ana")
    assert undone.reason == "removed"
    assert svc.remembered_count("fitness", "run") == 2
    assert top(svc, query, k=20).index("fitness") == rank


def test_an_accepted_call_records_only_for_the_subject_that_searched() -> None:
    svc = wide_service(quorum=1)
    found = svc.search("snow in the Alps", subject="ana")
    assert svc.accepted(found.search_id, "bob", "fitness", "run") is None
    assert svc.accepted(found.search_id, None, "fitness", "run") is None
    assert svc.accepted("no-such-id", "ana", "fitness", "run") is None
    done = svc.accepted(found.search_id, "ana", "fitness", "run")
    assert done is not None and done.recorded


@pytest.mark.parametrize(
    ("search_id", "plugin", "operation", "subject", "code"),
    [
        ("unknown", "fitness", "run", "ana", "unknown_search"),
        (None, "fitness", "run", None, "learning_refused"),
        (None, "no-such-plugin", None, "ana", "plugin_not_found"),
        (None, "fitness", "nope", "ana", "operation_not_found"),
        (None, "crypto", "run", "ana", "plugin_not_found"),  # hidden from ana
        (None, "fitness", "run", "bob", "unknown_search"),  # ana's search, not bob's
    ],
)
def test_bad_feedback_is_refused_with_a_code(
    search_id: str | None, plugin: str, operation: str | None, subject: str | None, code: str
) -> None:
    svc = wide_service()
    found = svc.search("snow in the Alps", subject="ana")
    with pytest.raises(PlugyardError) as raised:
        svc.feedback(
            search_id or found.search_id, plugin, operation, subject=subject,
            can_see=lambda p, op: p != "crypto",
        )  # fmt: skip
    assert raised.value.code == code
    assert svc.remembered_count("fitness", "run") == 2


def test_a_search_id_expires() -> None:
    now = [1000.0]
    embedder = CountingEmbedder()
    learning = Learning(embedder, settings=LearningSettings(search_ttl_s=60), clock=lambda: now[0])
    svc = DiscoveryService(wide_registry(), embedder, learning=learning)
    found = svc.search("snow", subject="ana")
    now[0] += 61
    with pytest.raises(PlugyardError) as raised:
        svc.feedback(found.search_id, "fitness", "run", subject="ana")
    assert raised.value.code == "unknown_search"


def test_identical_posts_count_once_and_a_subject_is_capped_per_tool() -> None:
    svc = wide_service(per_subject=5, quorum=1)
    found = svc.search("snow in the Alps", subject="eve")
    reasons = {svc.feedback(found.search_id, "fitness", "run", subject="eve").reason
               for _ in range(10_000)}  # fmt: skip
    assert reasons == {"recorded", "duplicate"}
    for i in range(20):
        other = svc.search(f"request number {i} about the mountains", subject="eve")
        svc.feedback(other.search_id, "fitness", "run", subject="eve")
    assert svc.remembered_count("fitness", "run") == 2 + 5
    # The cap is per subject: another one still teaches.
    found = svc.search("snow in the Alps", subject="ana")
    assert svc.feedback(found.search_id, "fitness", "run", subject="ana").recorded


def test_a_huge_query_is_searched_but_teaches_nothing() -> None:
    svc = wide_service()
    found = svc.search("snow " * 200_000, subject="ana")  # 1 MB
    assert svc.feedback(found.search_id, "fitness", "run", subject="ana").reason == "too_long"
    assert svc.learning.remembered("fitness") == []


def test_learning_off_records_nothing() -> None:
    svc = wide_service(enabled=False)
    found = svc.search("snow in the Alps", subject="ana")
    assert svc.feedback(found.search_id, "fitness", "run", subject="ana").reason == "disabled"
    assert svc.learning.remembered("fitness") == []


def test_a_removed_plugin_takes_its_memory_along() -> None:
    svc = wide_service(quorum=1)
    found = svc.search("snow in the Alps", subject="ana")
    svc.feedback(found.search_id, "fitness", "run", subject="ana")
    svc.registry.unregister("fitness")
    svc.search("anything")  # applies the event
    assert svc.learning.remembered("fitness") == []
    assert svc.remembered_count("fitness", "run") == 0
    with pytest.raises(PlugyardError) as raised:
        svc.feedback(found.search_id, "fitness", "run", subject="ana")
    assert raised.value.code == "plugin_not_found"


def test_admins_list_and_purge_a_tools_memory() -> None:
    svc = wide_service()
    for who in ("ana", "bob"):
        found = svc.search("snow in the Alps", subject=who)
        svc.feedback(found.search_id, "fitness", "run", subject=who)
    rows = svc.learning.remembered("fitness", "run")
    assert [(r.subject, r.query) for r in rows] == [
        ("ana", "snow in the Alps"),
        ("bob", "snow in the Alps"),
    ]
    assert svc.learning.purge("fitness") == 2
    assert svc.remembered_count("fitness", "run") == 2  # the manifest's examples stay


UNRELATED = [
    "will it rain in Paris tomorrow",
    "convert 100 dollars to euros",
    "schedule a meeting with Ana on Friday",
    "translate good morning into Spanish",
    "cheapest flight from Rome to Berlin",
    "a vegetarian lasagna recipe",
    "latest headlines about elections",
    "define serendipity",
    "set a timer for ten minutes",
    "play some jazz",
]


def test_one_subject_flooding_feedback_cannot_push_a_tool_into_anothers_top_5() -> None:
    svc = wide_service()
    before = {q: top(svc, q, "victim") for q in UNRELATED}
    assert sum("jokes" not in ids for ids in before.values()) >= 8
    # The attacker teaches "jokes" everything it can think of, many times over.
    for round_ in range(50):
        for q in [*UNRELATED, "help me please", "I need information", "what is the best"]:
            found = svc.search(f"{q} {round_ % 7}", subject="mallory")
            svc.feedback(found.search_id, "jokes", "run", subject="mallory")
    assert len(svc.learning.remembered("jokes")) == LearningSettings().per_subject
    after = {q: top(svc, q, "victim") for q in UNRELATED}
    pushed = [q for q in UNRELATED if "jokes" in after[q] and "jokes" not in before[q]]
    assert pushed == [], pushed


def test_memory_survives_a_restart_through_the_store_rows() -> None:
    embedder = CountingEmbedder()
    rows = SqlRememberedRepository(Store.open(":memory:"), embedder.dim)
    settings = LearningSettings(quorum=1)
    svc = DiscoveryService(wide_registry(), embedder, None, Learning(embedder, rows, settings))
    query = "is it going to snow in the Alps"
    rank = top(svc, query, k=20).index("fitness")
    found = svc.search(query, subject="ana")
    svc.feedback(found.search_id, "fitness", "run", subject="ana")
    again = DiscoveryService(wide_registry(), embedder, None, Learning(embedder, rows, settings))
    assert top(again, query, k=20).index("fitness") < rank
    assert again.remembered_count("fitness", "run") == 3


def test_learning_given_no_repository_keeps_its_rows_in_a_store_of_its_own() -> None:
    embedder = CountingEmbedder()
    svc = DiscoveryService(wide_registry(), embedder, learning=Learning(embedder))
    found = svc.search("is it going to snow in the Alps", subject="ana")
    assert svc.feedback(found.search_id, "fitness", "run", subject="ana").recorded
    (row,) = svc.learning.repository.rows(doc_id="fitness/run")
    assert (row.subject, row.query) == ("ana", "is it going to snow in the Alps")
    assert row.vector is not None and row.vector.shape == (embedder.dim,)


def test_filters_still_apply_to_what_memory_lifts() -> None:
    svc = wide_service(quorum=1)
    found = svc.search("snow in the Alps", subject="ana")
    svc.feedback(found.search_id, "fitness", "run", subject="ana")
    hidden = Filters(can_see=lambda p, op: p != "fitness")
    assert "fitness" not in [m.plugin_id for m in svc.search("snow in the Alps", 5, hidden)]


def test_learned_requests_count_once_enough_subjects_agree() -> None:
    svc = wide_service(quorum=3)
    query = "is it going to snow in the Alps"
    rank = top(svc, query, k=20).index("fitness")
    for n, who in enumerate(("ana", "bob", "cy"), start=1):
        found = svc.search(query, subject=who)
        assert svc.feedback(found.search_id, "fitness", "run", subject=who).recorded
        held = svc.remembered_count("fitness", "run")
        assert held == (2 if n < 3 else 5)  # dormant until the third subject
    assert top(svc, query, k=20).index("fitness") < rank
    # One of them takes it back: below quorum again, the tool ranks as before.
    found = svc.search(query, subject="cy")
    svc.feedback(found.search_id, "fitness", "run", helpful=False, subject="cy")
    assert svc.remembered_count("fitness", "run") == 2
    assert top(svc, query, k=20).index("fitness") == rank


def test_colluding_subjects_move_a_tool_only_within_their_caps() -> None:
    svc = wide_service(per_subject=2, quorum=3)
    for who in ("m1", "m2", "m3", "m4"):
        for i in range(10):
            found = svc.search(f"tell me about topic {i}", subject=who)
            svc.feedback(found.search_id, "jokes", "run", subject=who)
    assert len(svc.learning.remembered("jokes")) == 4 * 2


def test_a_long_compound_request_teaches_no_tool() -> None:
    from plugyard.discovery.learning import _single

    assert _single("convert five kilometres to miles")
    compound = " ".join(f"then convert distance{n} and check weather{n} please" for n in range(6))
    assert not _single(compound)
