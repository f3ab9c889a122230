"""The KB plugins' hooks: source texts and session events, to every enabled KB plugin."""

from __future__ import annotations

import asyncio
from typing import Any

from plugyard.manifest.families import SESSION_EVENT_SCHEMA, SESSION_EVENT_TYPES

from .lab import Lab, basic, retrieved

ACCEPT = {"status": "accepted", "error": None}
ENVELOPE = set(SESSION_EVENT_SCHEMA["properties"])  # type: ignore[arg-type]


def kbs(lab: Lab, *ids: str) -> Lab:
    for plugin_id in ids:
        lab.add(
            plugin_id,
            "kb",
            {
                "retrieve": retrieved("Paris is the capital of France."),
                "on_source_text": {"status": "accepted", "artifacts": [], "error": None},
                "on_session_event": ACCEPT,
            },
        )
    return lab


def normalizer(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    text = input["context"][0]["text"]
    lines = [
        f'@k{i} ku atomic "u{i}"\n@ks{i} set $k{i} claim "{part.strip()}"'
        for i, part in enumerate(text.split("."))
        if part.strip()
    ]
    return {"status": "success", "contextCNL": "\n".join(lines), "metadata": {}, "error": None}


def test_a_source_is_normalised_by_the_detector_and_offered_to_every_kb() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a", "kb-b")
    lab.add("sd-a", "sd", {"detect_seeds": lab_seeds(), "normalize_persistent_context": normalizer})
    service = lab.service
    session = asyncio.run(service.create_session(kb_id="kb-1"))
    source = asyncio.run(service.add_source(session.id, "notes.txt", "Lyon is big. Nice is warm."))
    assert [u.text for u in source.units] == ["Lyon is big", "Nice is warm"]
    assert source.bytes == 26 and len(source.sha256) == 64
    offers = [c for c in lab.calls if c.operation == "on_source_text"]
    assert [c.plugin for c in offers] == ["kb-a", "kb-b"]
    offer = offers[0]
    assert offer.input["text"] == "Lyon is big. Nice is warm."
    assert [u["text"] for u in offer.input["units"]] == ["Lyon is big", "Nice is warm"]
    assert offer.input["units"][0]["sourceLink"] == source.id
    assert offer.context["hookType"] == "source-text"
    assert offer.context["kbRepositoryManager"]["kbId"] == "kb-1"
    assert offer.context["parser"] is None and offer.context["decomposer"] is None
    assert [s.id for s in service.sources(session.id)] == [source.id]


def lab_seeds() -> Any:
    from .lab import seeds

    return seeds()


def test_without_a_normaliser_the_core_splits_paragraphs() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a")
    service = lab.service
    session = asyncio.run(service.create_session())
    source = asyncio.run(service.add_source(session.id, "n", "First part.\n\nSecond part."))
    assert [u.text for u in source.units] == ["First part.", "Second part."]


def test_sources_given_with_a_request_are_offered_before_seed_detection() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a")
    lab.reason(sources=[("memo", "Paris hosts the Louvre.")])
    order = [c.operation for c in lab.calls]
    assert order.index("on_source_text") < order.index("detect_seeds")


def test_each_session_event_goes_to_every_kb_in_the_canonical_envelope() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a", "kb-b")
    service = lab.service

    async def lifecycle() -> None:
        session = await service.create_session(kb_name="first")
        await service.mount(session.id, "kb-2", "second")
        await service.save_kb(session.id, "saved")
        await service.fork(session.id)
        await service.stage_units(session.id, [{"text": "A unit for the next turn."}])

    asyncio.run(lifecycle())
    events = [c for c in lab.calls if c.operation == "on_session_event"]
    kinds = [c.input["eventType"] for c in events if c.plugin == "kb-a"]
    assert kinds == ["session-created", "kb-loaded", "kb-saved", "kb-forked", "session-kus-added"]
    assert set(kinds) == set(SESSION_EVENT_TYPES)
    assert [c.plugin for c in events] == ["kb-a", "kb-b"] * 5
    for call in events:
        assert set(call.input) == ENVELOPE
    loaded = next(c.input for c in events if c.input["eventType"] == "kb-loaded")
    assert (loaded["kbId"], loaded["previousKbName"], loaded["requestedKbId"]) == (
        "kb-2",
        "first",
        "kb-2",
    )
    saved = next(c.input for c in events if c.input["eventType"] == "kb-saved")
    assert saved["snapshot"] == {"units": 0, "sources": 0}
    added = next(c.input for c in events if c.input["eventType"] == "session-kus-added")
    assert added["scope"] == "current-turn" and added["units"][0]["text"].startswith("A unit")


def test_a_kb_refusing_a_hook_does_not_stop_the_others() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a", "kb-b")

    def broken(input: dict, ctx: dict) -> dict:
        raise RuntimeError("full")

    lab.add("kb-a", "kb", {"retrieve": retrieved("x"), "on_session_event": broken})
    asyncio.run(lab.service.create_session())
    assert [c.plugin for c in lab.calls if c.operation == "on_session_event"] == ["kb-a", "kb-b"]


def test_a_restarted_service_hands_a_sessions_kb_to_the_plugins_again() -> None:
    lab = kbs(basic(Lab(), kb=()), "kb-a")
    first = lab.service
    session = asyncio.run(first.create_session())
    asyncio.run(first.add_source(session.id, "n", "Zanzibar exports cloves."))
    asyncio.run(first.reason("What does Zanzibar export?", session=session.id))
    lab.calls.clear()
    restarted = lab.service  # same stores, a new process's service
    asyncio.run(restarted.reason("And what else?", session=session.id))
    loaded = next(c.input for c in lab.calls if c.operation == "on_session_event")
    assert loaded["eventType"] == "kb-loaded" and loaded["reason"] == "session-resumed"
    assert "Zanzibar exports cloves." in [u["text"] for u in loaded["units"]]
