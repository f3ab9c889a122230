"""Ask: the routing flow's answer and each step — retrieved, chosen, called — on the page."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi.testclient import TestClient

from plugyard.llm.types import ChatAnswer, ChatRequest, Delta, Usage
from plugyard.yard import Yard

from .conftest import codes, csrf_of


class Scripted:
    """A chat model that answers from a script, in process."""

    identity = "scripted:test"

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        if request.top_logprobs:  # a yes/no verdict of the scored method: no opinion
            return ChatAnswer("yes", "stop", Usage(10, 1), 1.0, "scripted")
        value = self.answers.pop(0)
        return ChatAnswer(json.dumps(value), "stop", Usage(10, 5), 1.0, "scripted", json=value)

    def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:
        raise NotImplementedError


def script(yard: Yard) -> None:
    vars(yard)["llm"] = Scripted([{
        "plugin": "unit-convert", "operation": "convert", "final": True,
        "arguments": {"value": 3, "from_unit": "km", "to_unit": "mi"},
    }])  # fmt: skip


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
