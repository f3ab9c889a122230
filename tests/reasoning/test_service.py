"""Bad input: refused arguments raise; everything else ends in a recorded outcome, with
bounded work and nothing written to the session."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from plugyard.errors import ReasoningError
from plugyard.types import Caller

from .lab import Lab, basic

ANA = Caller("ana")


def test_a_huge_source_is_a_recorded_failure_and_nothing_runs() -> None:
    lab = basic(Lab())
    huge = "x" * (lab.limits.max_source_bytes + 1)
    service = lab.service
    session = asyncio.run(service.create_session())
    lab.calls.clear()
    answer = asyncio.run(
        service.reason("Summarise it", session=session.id, sources={"big.txt": huge})
    )
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "request_too_large"
    assert [c.operation for c in lab.calls] == []
    assert lab.outcomes.get(answer.request_id) is not None
    stored = lab.sessions.get(session.id)
    assert stored is not None and stored.committed == () and stored.conversation == ()


def test_a_huge_upload_is_refused() -> None:
    lab = basic(Lab())
    lab.limits = replace(lab.limits, max_source_bytes=10)
    service = lab.service
    session = asyncio.run(service.create_session())
    with pytest.raises(ReasoningError) as caught:
        asyncio.run(service.add_source(session.id, "n", "more than ten bytes"))
    assert caught.value.code == "request_too_large"
    assert service.sources(session.id) == ()


@pytest.mark.parametrize(
    "options",
    [
        {"prompt": "   "},
        {"prompt": ""},
        {"budget": -1},
        {"pins": {"kb": 3}},
        {"sources": [("a",)]},
        {"session": ""},
    ],
)
def test_malformed_arguments_are_refused(options: dict) -> None:
    lab = basic(Lab())
    prompt = options.pop("prompt", "Capital of France?")
    with pytest.raises(ReasoningError) as caught:
        lab.reason(prompt, **options)
    assert caught.value.code == "invalid_request"
    assert lab.calls == []


def test_a_prompt_over_the_limit_is_a_recorded_failure() -> None:
    lab = basic(Lab())
    lab.limits = replace(lab.limits, max_prompt_chars=10)
    answer = lab.reason("a prompt longer than ten characters")
    assert answer.error is not None and answer.error.code == "request_too_large"
    assert lab.calls == []


def test_an_unknown_session_is_refused() -> None:
    lab = basic(Lab())
    with pytest.raises(ReasoningError) as caught:
        lab.reason(session="ses_nope")
    assert caught.value.code == "session_not_found"


def test_records_are_listed_newest_first_by_subject_and_session() -> None:
    lab = basic(Lab())
    service = lab.service
    first = lab.reason(caller=ANA)
    second = lab.reason(caller=Caller("bob"))
    assert [r.request_id for r in service.records()] == [second.request_id, first.request_id]
    assert [r.request_id for r in service.records(caller=ANA)] == [first.request_id]
    assert service.record(first.request_id, ANA).request_id == first.request_id
    with pytest.raises(ReasoningError) as caught:
        service.record(first.request_id, Caller("bob"))
    assert caught.value.code == "outcome_not_found"


@pytest.mark.parametrize(
    "name", ["atlas\x00.md", "a\nforged line", "bell\x07", "\u202egpj.exe", "", "x" * 201]
)
def test_a_source_name_that_is_not_a_label_is_refused_with_its_pointer(name: str) -> None:
    lab = basic(Lab())
    with pytest.raises(ReasoningError) as caught:
        lab.reason(sources=[("fine.md", "Paris."), (name, "Paris.")])
    assert caught.value.code == "invalid_source_name"
    assert [p.pointer for p in caught.value.problems] == ["/sources/1/name"]
    assert lab.calls == []
    session = asyncio.run(lab.service.create_session())
    with pytest.raises(ReasoningError) as upload:
        asyncio.run(lab.service.add_source(session.id, name, "Paris."))
    assert upload.value.code == "invalid_source_name"
    assert [p.pointer for p in upload.value.problems] == ["/name"]
    assert lab.service.sources(session.id) == ()


def test_a_path_like_source_name_stays_a_label() -> None:
    lab = basic(Lab())
    session = asyncio.run(lab.service.create_session())
    added = asyncio.run(lab.service.add_source(session.id, "../../etc/passwd", "Paris."))
    assert added.name == "../../etc/passwd" and added.bytes == len("Paris.")
    assert [u.text for u in added.units] == ["Paris."]  # the text given, no file read
