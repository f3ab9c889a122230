"""``POST /api/v1/ask``, its event stream and ``POST /api/v1/ask/confirm``, with the
scripted fake as the yard's model: the answer and its trace, each step as it finishes,
malformed requests refused with the pointer of the fault, a model that is down answered
as an answer, not a 5xx, and a held write run only when the key it was held for
confirms it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from plugyard.llm.testing import Reply, ScriptedModel

QUESTION = {"message": "calculate 6*7 with the calculator", "k": 3}


def calls(*made: tuple[str, dict[str, Any]]) -> Reply:
    """The model's answer: these tool calls (a server that writes native calls)."""
    return Reply(tool_calls=tuple(
        {"id": f"call_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}
        for n, (name, arguments) in enumerate(made)
    ), finish_reason="tool_calls")  # fmt: skip


SIX_BY_SEVEN = calls(("calculator", {"expression": "6*7"}))


def h(key: str, **extra: str) -> dict[str, str]:
    return {"X-API-Key": key, **extra}


def events(text: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def test_a_question_is_answered_with_its_trace_and_cost(
    client: TestClient, admin_key: str, model: ScriptedModel
) -> None:
    model.script(SIX_BY_SEVEN)
    reply = client.post("/api/v1/ask", json=QUESTION, headers=h(admin_key))
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert answer["status"] == "answered" and answer["data"]["result"] == 42
    (step,) = answer["steps"]
    assert step["choice"]["plugin"] == "calculator" and step["status"] == "success"
    assert answer["cost"]["llm_calls"] == 1 and answer["cost"]["tokens"] > 0
    assert answer["cost"]["tool_calls"] == 1 and answer["request_id"]


@pytest.mark.parametrize("how", ["path", "accept"])
def test_the_stream_sends_each_step_then_the_answer(
    client: TestClient, admin_key: str, model: ScriptedModel, how: str
) -> None:
    model.script(
        calls(("calculator", {"expression": "6*7"}), ("calculator", {"expression": "7*6"}))
    )
    path = "/api/v1/ask/stream" if how == "path" else "/api/v1/ask"
    headers = h(admin_key, Accept="text/event-stream")
    reply = client.post(path, json={**QUESTION, "max_steps": 2}, headers=headers)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith(
        "text/event-stream"
    )
    sent = events(reply.text)
    assert [kind for kind, _ in sent] == ["step", "step", "answer"]
    assert [data["step"] for _, data in sent[:2]] == [1, 2]
    answer = sent[-1][1]
    assert answer["status"] == "answered" and len(answer["steps"]) == 2


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"message": ""}, "/body/message"),
        ({"message": "   "}, "/body/message"),
        ({"message": "x" * 8001}, "/body/message"),
        ({"message": "6*7", "k": 0}, "/body/k"),
        ({"message": "6*7", "k": "5"}, "/body/k"),
        ({"message": "6*7", "max_steps": 11}, "/body/max_steps"),
        ({}, "/body/message"),
    ],
)
def test_a_malformed_request_is_refused_with_the_pointer_of_its_fault(
    client: TestClient, admin_key: str, model: ScriptedModel, body: dict[str, Any], pointer: str
) -> None:
    reply = client.post("/api/v1/ask", json=body, headers=h(admin_key))
    error = reply.json()["error"]
    assert reply.status_code == 400 and error["message"]["error"] == "invalid_request"
    assert [f["pointer"] for f in error["details"]["errors"]] == [pointer]
    assert not model.requests


def test_an_integral_k_written_as_a_float_is_an_integer(
    client: TestClient, admin_key: str, model: ScriptedModel
) -> None:
    model.script(SIX_BY_SEVEN)
    reply = client.post("/api/v1/ask", json={**QUESTION, "k": 3.0}, headers=h(admin_key))
    assert reply.status_code == 200 and reply.json()["status"] == "answered"


def test_without_a_key_nothing_is_asked(client: TestClient, model: ScriptedModel) -> None:
    reply = client.post("/api/v1/ask", json=QUESTION)
    assert reply.status_code == 401 and not model.requests


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_that_is_down_is_an_answer_with_its_code_not_a_server_error(
    client: TestClient, admin_key: str, model: ScriptedModel, stream: bool
) -> None:
    model.script(Reply.error(400))  # refused outright: no retry can help
    path = "/api/v1/ask/stream" if stream else "/api/v1/ask"
    reply = client.post(path, json=QUESTION, headers=h(admin_key))
    assert reply.status_code == 200
    answer = events(reply.text)[-1][1] if stream else reply.json()
    assert answer["status"] == "error" and answer["error"]["code"] == "llm_unavailable"
    assert answer["cost"]["tool_calls"] == 0


def test_members_of_earlier_versions_are_accepted_and_ignored(
    client: TestClient, admin_key: str, model: ScriptedModel
) -> None:
    # ``mode`` and ``method`` chose between decision methods; the loop has one.
    model.script(SIX_BY_SEVEN)
    body = {**QUESTION, "mode": "tools", "method": "scored"}
    reply = client.post("/api/v1/ask", json=body, headers=h(admin_key))
    assert reply.status_code == 200 and reply.json()["status"] == "answered"


MAIL = {"message": "calculate 6*7 with the calculator, then send one message to "
        "ann@example.org with the mailer", "k": 10}  # fmt: skip
READ_THEN_SEND = calls(("calculator", {"expression": "6*7"}),
                       ("mailer__send", {"to": "ann@example.org"}))  # fmt: skip


def test_a_held_write_runs_once_when_the_key_it_was_held_for_confirms_it(
    client: TestClient, admin_key: str, reader_key: str, model: ScriptedModel
) -> None:
    def sent() -> int:  # the plugin's outbox is its module's: other tests send too
        reply = client.post("/api/v1/plugins/mailer/execute?operation=outbox", json={},
                            headers=h(admin_key)).json()  # fmt: skip
        return int(reply["data"]["count"])

    before = sent()
    model.script(READ_THEN_SEND)
    answer = client.post("/api/v1/ask", json=MAIL, headers=h(admin_key)).json()
    assert answer["status"] == "pending_confirmation", answer
    assert [s["status"] for s in answer["steps"]] == ["success", "pending_confirmation"]
    receipt = answer["pending"]["receipt"]
    assert sent() == before  # held: nothing was sent
    other = client.post("/api/v1/ask/confirm", json={"receipt": receipt},
                        headers=h(reader_key))  # fmt: skip
    assert other.status_code == 403 and other.json()["error"]["message"]["error"] == (
        "invalid_receipt"
    )
    done = client.post("/api/v1/ask/confirm", json={"receipt": receipt}, headers=h(admin_key))
    assert done.status_code == 200 and done.json()["status"] == "success", done.text
    assert done.json()["data"] == {"sent_to": "ann@example.org"}
    assert sent() == before + 1
    again = client.post("/api/v1/ask/confirm", json={"receipt": receipt}, headers=h(admin_key))
    assert again.json()["error"]["message"]["error"] == "receipt_used"


@pytest.mark.parametrize("body", [{}, {"receipt": ""}, {"receipt": 7}])
def test_a_malformed_confirmation_is_refused(
    client: TestClient, admin_key: str, body: dict[str, Any]
) -> None:
    reply = client.post("/api/v1/ask/confirm", json=body, headers=h(admin_key))
    assert reply.status_code == 400
    assert [f["pointer"] for f in reply.json()["error"]["details"]["errors"]] == ["/body/receipt"]


def test_confirming_without_a_key_is_refused(client: TestClient) -> None:
    reply = client.post("/api/v1/ask/confirm", json={"receipt": "pyr_" + "x" * 43})
    assert reply.status_code == 401


def test_the_route_is_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    body = paths["/api/v1/ask"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].endswith("/AskBody")
    streamed = paths["/api/v1/ask/stream"]["post"]["responses"]["200"]["content"]
    assert "text/event-stream" in streamed
    confirm = paths["/api/v1/ask/confirm"]["post"]
    assert confirm["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ConfirmBody"
    )
    assert not any(path.startswith("/v1/") for path in paths)
