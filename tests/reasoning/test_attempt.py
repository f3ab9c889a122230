"""Validation after a solver answered: a rejection backtracks, attempts are bounded."""

from __future__ import annotations

from .lab import Lab, basic, verdict


def test_a_validator_that_rejects_everything_ends_in_a_bounded_failure() -> None:
    lab = basic(Lab())
    lab.add("val-a", "val", {"validate": verdict("rejected", "never good enough")})
    service = lab.service
    import asyncio

    session = asyncio.run(service.create_session())
    answer = asyncio.run(service.reason("What is the capital of France?", session=session.id))
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "validation_rejected"
    assert len(lab.ran("validate")) <= lab.limits.max_plan_attempts
    assert answer.answer is None
    stored = lab.sessions.get(session.id)
    assert stored is not None and stored.conversation == () and stored.committed == ()


def test_every_validator_must_accept() -> None:
    lab = basic(Lab())
    lab.add("val-a", "val", {"validate": verdict("accepted")})
    lab.add("val-b", "val", {"validate": verdict("rejected")})
    answer = lab.reason()
    assert answer.status == "failure"
    assert lab.ran("validate")[:2] == ["val-a", "val-b"]


def test_a_validator_that_fails_does_not_judge() -> None:
    lab = basic(Lab())

    def broken(input: dict, ctx: dict) -> dict:
        raise ValueError("no opinion")

    lab.add("val-a", "val", {"validate": broken})
    answer = lab.reason()
    assert answer.status == "answered"
    assert [s.status for s in answer.record.stages if s.stage == "validation"] == ["error"]


def test_the_validator_gets_the_answer_and_its_evidence() -> None:
    lab = basic(Lab())
    lab.add("val-a", "val", {"validate": verdict("accepted")})
    lab.reason()
    given = lab.inputs("val-a", "validate")[0]
    assert given["answer"] == "Paris." and given["responseMarkdown"] == "Paris."
    assert given["context"][0]["text"] == "Paris is the capital of France."
