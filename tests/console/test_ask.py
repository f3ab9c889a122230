"""Ask: the routing flow's answer and each step — retrieved, chosen, called — on the page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi.testclient import TestClient

from plugyard.llm.types import ChatAnswer, ChatRequest, Delta, ToolCall, Usage
from plugyard.yard import Yard

from .conftest import codes, csrf_of


class Scripted:
    """A chat model that answers from a script, in process."""

    identity = "scripted:test"

    def __init__(self, answers: list[list[dict[str, Any]]]) -> None:
        self.answers = answers

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        # Each scripted answer is the calls the model makes (as native tool calls).
        made = tuple(ToolCall(c["name"], c["arguments"]) for c in self.answers.pop(0))
        return ChatAnswer("", "tool_calls", Usage(10, 5), 1.0, "scripted", tool_calls=made)

    def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:
        raise NotImplementedError


def script(yard: Yard) -> None:
    vars(yard)["llm"] = Scripted([[{
        "name": "unit-convert__convert",
        "arguments": {"value": 3, "from_unit": "km", "to_unit": "mi"},
    }]])  # fmt: skip


def test_an_answer_shows_each_step(admin: TestClient, yard: Yard) -> None:
    script(yard)
    page = admin.get("/console/ask").text
    reply = admin.post("/console/ask", data={"csrf_token": csrf_of(page),
                       "message": "how many miles is 3 km?"})  # fmt: skip
    assert 'data-status="answered"' in reply.text
    step = re.search(r'<li class="step" data-step="1" data-status="success">(.*?)</li>',
                     reply.text, re.S)  # fmt: skip
    assert step is not None
    assert "<code>unit-convert.convert</code>" in step.group(1)  # retrieved and chosen
    assert "Call arguments" in step.group(1)


def test_steps_stream_as_they_finish(admin: TestClient, yard: Yard) -> None:
    script(yard)
    page = admin.get("/console/ask").text
    form = {"csrf_token": csrf_of(page), "message": "3 km in miles?"}
    reply = admin.post("/console/ask", data=form, headers={"accept": "text/event-stream"})
    events = re.findall(r"event: (\w+)\n", reply.text)
    assert events == ["step", "result"]


def test_an_empty_message_is_refused(admin: TestClient) -> None:
    page = admin.get("/console/ask").text
    reply = admin.post("/console/ask", data={"csrf_token": csrf_of(page), "message": "  "})
    assert reply.status_code == 400 and "invalid_request" in codes(reply.text)


def test_the_answer_is_a_sentence_with_its_data_beside_it(admin: TestClient, yard: Yard) -> None:
    script(yard)
    page = admin.get("/console/ask").text
    reply = admin.post("/console/ask", data={"csrf_token": csrf_of(page),
                       "message": "how many miles is 3 km?"})  # fmt: skip
    text = re.search(r'<div class="answer-text">(.*?)</div>', reply.text, re.S)
    assert text is not None and "1.86" in text.group(1) and "{" not in text.group(1)
    assert "<summary>Data</summary>" in reply.text
    assert re.search(r'id="progress-box"[^>]* hidden', reply.text)  # no empty second list


MAIL = "calculate 6*7 with the calculator, then send one message to ann@example.org with the mailer"


def test_a_held_call_is_confirmed_with_the_answers_confirm_button(
    admin: TestClient, clerk: TestClient, yard: Yard
) -> None:
    vars(yard)["llm"] = Scripted([[
        {"name": "calculator", "arguments": {"expression": "6*7"}},
        {"name": "mailer__send", "arguments": {"to": "ann@example.org"}},
    ]])  # fmt: skip
    page = admin.get("/console/ask").text
    reply = admin.post("/console/ask", data={"csrf_token": csrf_of(page), "message": MAIL})
    assert 'data-status="pending_confirmation"' in reply.text, reply.text
    form = re.search(r'<form method="post" action="/console/ask/confirm".*?</form>', reply.text,
                     re.S)  # fmt: skip
    assert form is not None and ">Confirm</button>" in form.group(0)
    receipt = re.search(r'name="receipt" value="([^"]+)"', form.group(0))
    assert receipt is not None
    posted = {"csrf_token": csrf_of(form.group(0)), "receipt": receipt.group(1)}
    # Another subject's session cannot run it: the receipt was held for the admin.
    theirs = clerk.post(
        "/console/ask/confirm",
        data={**posted, "csrf_token": csrf_of(clerk.get("/console/ask").text)},
    )
    assert 'data-code="invalid_receipt"' in theirs.text
    done = admin.post("/console/ask/confirm", data=posted)
    assert 'data-status="success"' in done.text and "ann@example.org" in done.text
    again = admin.post("/console/ask/confirm", data=posted)
    assert 'data-code="receipt_used"' in again.text


def test_a_confirmation_without_a_receipt_is_refused(admin: TestClient) -> None:
    page = admin.get("/console/ask").text
    reply = admin.post("/console/ask/confirm", data={"csrf_token": csrf_of(page)})
    assert reply.status_code == 400 and "invalid_request" in codes(reply.text)
