"""The yard's model is a governed resource: one gate decides the right (the policy's
``model``/``use``), the rate per subject (the store's buckets) and the input caps, for
every flow that reaches the model — ask, chat and reasoning."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from plugyard.errors import ModelRefused
from plugyard.llm import Message
from plugyard.routing.chat import Conversation
from plugyard.yard import Settings, Yard
from plugyard.yard.model_gate import MAX_CONVERSATION_CHARS

SETTINGS = Settings(builtins=True, embedder="hashing", llm="openai:http://127.0.0.1:9/v1:none")


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    settings = replace(SETTINGS, database=str(tmp_path / "yard.db"), model_rate_per_minute=3)
    with Yard.from_settings(settings) as found:
        yield found


def refused(call: object) -> ModelRefused:
    with pytest.raises(ModelRefused) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_the_starter_policy_lets_admin_and_reader_use_the_model_and_no_one_else(
    yard: Yard,
) -> None:
    gate = yard.model_gate
    assert gate.may_use("root", ("admin",)) and gate.may_use("ann", ("reader",))
    assert not gate.may_use("nobody", ()) and not gate.may_use("x", ("clerk",))
    assert gate.may_use(None, ())  # the embedding application owns the model
    assert refused(lambda: gate.admit("nobody", ())).code == "permission_denied"


def test_a_loaded_policy_grants_the_model_only_with_verb_use(yard: Yard) -> None:
    policy = yard.governing.policy
    assert policy is not None
    policy.load_text("""
grants:
  - {to: "role:clerk", plugin: "*", operation: "*", effect: allow}
  - {to: "role:boss", plugin: model, operation: use, verb: use, effect: allow}
""")
    assert not yard.model_gate.may_use("c", ("clerk",))  # calling everything is not it
    assert yard.model_gate.may_use("b", ("boss",))


def test_the_rate_is_per_subject_and_says_when_to_retry(yard: Yard) -> None:
    gate = yard.model_gate
    for _ in range(3):
        gate.admit("ann", ("reader",), [("/message", "hello")])
    over = refused(lambda: gate.admit("ann", ("reader",)))
    assert over.code == "rate_limited" and over.details["retry_after_s"] >= 1
    assert over.details["limit_per_minute"] == 3
    gate.admit("bob", ("reader",))  # another subject's bucket is its own
    for _ in range(10):
        gate.admit(None, ())  # the application is never limited


def test_oversized_input_is_refused_with_its_pointer_before_any_token_is_spent(
    yard: Yard,
) -> None:
    gate = yard.model_gate
    big = refused(lambda: gate.admit("ann", ("reader",), [("/messages/1/content", "x" * 8001)]))
    assert big.code == "input_too_large" and big.details["limit_chars"] == 8000
    assert big.details["errors"][0]["pointer"] == "/messages/1/content"
    many = [(f"/messages/{i}/content", "x" * 8000) for i in range(5)]
    total = refused(lambda: gate.admit("ann", ("reader",), many))
    assert total.code == "input_too_large"
    assert total.details["limit_chars"] == MAX_CONVERSATION_CHARS
    for _ in range(3):  # the refusals took nothing from ann's bucket
        gate.admit("ann", ("reader",))


def test_every_flow_that_reaches_the_model_passes_the_gate(yard: Yard) -> None:
    # No model answers at this address: an admitted request ends in llm_unavailable,
    # a refused one never gets that far.
    asked = asyncio.run(yard.ask("convert 3 km to miles", subject="nobody", roles=()))
    assert asked.error is not None and asked.error.code == "permission_denied"
    routed = asyncio.run(yard.router.ask("convert 3 km to miles", subject="n", roles=()))
    assert routed.error is not None and routed.error.code == "permission_denied"
    admitted = asyncio.run(yard.ask("convert 3 km to miles", subject="ann", roles=("reader",)))
    assert admitted.error is None or admitted.error.code != "permission_denied"

    huge = Conversation((Message("user", "x" * 1_000_000),))
    with pytest.raises(ModelRefused) as chat:
        asyncio.run(yard.chat.complete(huge, subject="ann", roles=("reader",)))
    assert chat.value.code == "input_too_large"
    assert chat.value.details["errors"][0]["pointer"] == "/messages/0/content"
    small = Conversation((Message("user", "hello"),))
    with pytest.raises(ModelRefused) as no_right:
        asyncio.run(yard.chat.complete(small, subject="nobody", roles=()))
    assert no_right.value.code == "permission_denied"
    with pytest.raises(ModelRefused):
        yard.chat.model_for("nobody", ())

    with pytest.raises(ModelRefused) as reason:
        asyncio.run(yard.reason("What is 6*7?", subject="nobody", roles=()))
    assert reason.value.code == "permission_denied"
    long = "x" * 8001
    with pytest.raises(ModelRefused) as long_prompt:
        asyncio.run(yard.reason(long, subject="ann", roles=("reader",)))
    assert long_prompt.value.code == "input_too_large"
    assert long_prompt.value.details["errors"][0]["pointer"] == "/prompt"
    # Without model calls (budget 0) reasoning needs no model right.
    quiet = asyncio.run(yard.reason("What is 6*7?", subject="nobody", roles=(), budget=0))
    assert quiet.error is None or quiet.error.code != "permission_denied"
