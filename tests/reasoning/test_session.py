"""Sessions: a successful turn is committed whole, a failed one writes nothing."""

from __future__ import annotations

import asyncio

import pytest

from plugyard.errors import ReasoningError
from plugyard.reasoning.session import (
    MAX_TURNS,
    Session,
    Turn,
    committed,
    staged,
)
from plugyard.reasoning.units import Unit
from plugyard.types import Caller

from .lab import Lab, basic, retrieved, seeds, verdict


def test_a_successful_turn_commits_its_units_and_the_turn() -> None:
    lab = basic(Lab())
    lab.add("sd-a", "sd", {"detect_seeds": seeds(units=["Paris has 2 million people."])})
    lab.add(
        "kb-a",
        "kb",
        {
            "retrieve": retrieved("Paris is the capital of France."),
            "on_session_event": {"status": "accepted", "error": None},
        },
    )
    service = lab.service
    session = asyncio.run(service.create_session())
    asyncio.run(service.stage_units(session.id, [{"text": "Staged before the turn."}]))
    answer = asyncio.run(
        service.reason(
            "Capital of France?", session=session.id, sources={"notes": "Lyon is in France."}
        )
    )
    stored = lab.sessions.get(session.id)
    assert stored is not None and answer.session_id == session.id
    texts = [u.text for u in stored.committed]
    assert texts == ["Staged before the turn.", "Paris has 2 million people.", "Lyon is in France."]
    assert stored.staged == ()
    assert [t.prompt for t in stored.conversation] == ["Capital of France?"]
    assert stored.conversation[0].answer == "Paris."
    told = [c.input for c in lab.calls if c.operation == "on_session_event"]
    assert told[-1]["eventType"] == "session-kus-added" and told[-1]["scope"] == "committed-session"


def test_a_failed_turn_leaves_the_session_as_it_was() -> None:
    lab = basic(Lab())
    lab.add("val-a", "val", {"validate": verdict("rejected")})
    lab.add("sd-a", "sd", {"detect_seeds": seeds(units=["Something learnt."])})
    service = lab.service
    session = asyncio.run(service.create_session())
    asyncio.run(service.stage_units(session.id, [{"text": "Staged."}]))
    before = lab.sessions.get(session.id)
    asyncio.run(
        service.reason(
            "Capital of France?", session=session.id, sources={"notes": "Lyon is in France."}
        )
    )
    after = lab.sessions.get(session.id)
    assert before is not None and after is not None
    assert (after.staged, after.committed, after.conversation) == (
        before.staged,
        before.committed,
        before.conversation,
    )


def test_the_next_turn_sees_the_conversation() -> None:
    lab = basic(Lab())
    service = lab.service
    session = asyncio.run(service.create_session())
    asyncio.run(service.reason("Capital of France?", session=session.id))
    asyncio.run(service.reason("And of Italy?", session=session.id))
    context = [c.context for c in lab.calls if c.operation == "solve"][-1]
    assert [t["prompt"] for t in context["conversation"]] == ["Capital of France?"]


def test_a_session_belongs_to_its_subject() -> None:
    lab = basic(Lab())
    service = lab.service
    mine = asyncio.run(service.create_session(caller=Caller("ana")))
    with pytest.raises(ReasoningError) as caught:
        asyncio.run(service.reason("x?", session=mine.id, caller=Caller("bob")))
    assert caught.value.code == "session_not_found"
    assert service.session(mine.id, Caller("ana")).id == mine.id
    assert service.session(mine.id).id == mine.id  # the application itself may use any


def test_sessions_keep_bounded_history() -> None:
    session = Session("s")
    for index in range(MAX_TURNS + 5):
        session = committed(session, [Unit(f"u{index}")], Turn(str(index), "p", "a", "success"))
    assert len(session.conversation) == MAX_TURNS
    assert session.conversation[-1].request_id == str(MAX_TURNS + 4)
    assert staged(Session("s"), [Unit("a"), Unit("a")]).staged == (Unit("a"),)
