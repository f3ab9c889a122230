"""Ask: a chat page on the routing flow (``yard.ask``, docs/routing.md), as the viewer.

Each step is shown as it finishes — the operations retrieved (with their scores), the
model's choice with its arguments, and the call's status — then the answer. With the
page's script the steps arrive as server-sent events; without it, all at once.

An answer ``pending_confirmation`` carries a Confirm button: it posts the answer's
receipt to ``/console/ask/confirm``, which runs the held call as the viewer
(``Router.confirm``: only the subject it was held for may) and shows its result.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from plugyard.console.results import pretty, view
from plugyard.console.security import page_headers
from plugyard.console.web import (
    ConsoleRoute,
    PageRefused,
    Viewer,
    console_of,
    posted,
    render,
    viewer,
)
from plugyard.routing.outcomes import Answer
from plugyard.routing.trace import Step

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
MAX_MESSAGE = 4000


def step_view(step: Step) -> dict[str, Any]:
    data = step.to_dict()
    data["arguments"] = pretty((step.choice or {}).get("arguments"), 4000) if step.choice else None
    return data


def answer_view(answer: Answer) -> dict[str, Any]:
    data = answer.to_dict()
    data["data_text"] = pretty(answer.data) if answer.data is not None else None
    data["steps"] = [step_view(s) for s in answer.steps]
    return data


@router.get("/console/ask")
async def ask_page(request: Request) -> Response:
    who = viewer(request)
    return render(request, "ask.html", who=who, message="", answer=None)


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


@router.post("/console/ask")
async def ask(request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    message = form.get("message")
    if not isinstance(message, str) or not message.strip():
        raise PageRefused("write a message", code="invalid_request")
    if len(message) > MAX_MESSAGE:
        raise PageRefused(f"a message is at most {MAX_MESSAGE} characters", code="invalid_request")
    if "text/event-stream" in request.headers.get("accept", ""):
        return _streamed(request, who, message)
    answer = await console_of(request).yard.ask(message, subject=who.subject, roles=who.roles)
    return render(request, "ask.html", who=who, message=message, answer=answer_view(answer))


def _streamed(request: Request, who: Viewer, message: str) -> StreamingResponse:
    console = console_of(request)
    steps: asyncio.Queue[Step | None] = asyncio.Queue()

    def fragment(name: str, **context: Any) -> str:
        return console.templates.get_template(name).render(**context)

    async def events() -> AsyncIterator[bytes]:
        asking = asyncio.ensure_future(
            console.yard.ask(
                message, subject=who.subject, roles=who.roles, on_step=steps.put_nowait
            )
        )
        asking.add_done_callback(lambda _: steps.put_nowait(None))
        while (step := await steps.get()) is not None:
            yield _event("step", {"html": fragment("_step.html", s=step_view(step))})
        answer = await asking
        html = fragment("_answer.html", answer=answer_view(answer), csrf=who.session.csrf)
        yield _event("result", {"html": html})

    headers = {**page_headers(), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


@router.post("/console/ask/confirm")
async def confirm(request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    receipt = form.get("receipt")
    if not isinstance(receipt, str) or not receipt.strip():
        raise PageRefused("no receipt to confirm", code="invalid_request")
    router_ = console_of(request).yard.router
    result = await router_.confirm(receipt.strip(), subject=who.subject, roles=who.roles)
    return render(request, "ask.html", who=who, message="", answer=None, confirmed=view(result))
