"""The OpenAI-compatible endpoint (docs/openai.md): ``POST /v1/chat/completions`` and
``GET /v1/models``, so an application built on an OpenAI SDK gets the yard's tools, run
here under plugyard's governance, by changing its base URL and key.

The key is a plugyard API key (``Authorization: Bearer``, as the SDKs send it); who
calls is its subject, never the body's ``user``. The conversation is answered by the
chat flow (routing/chat.py); this module only adapts HTTP. The answer is computed before
the first byte is sent, so a model that fails is an HTTP error in OpenAI's shape
(server/openai_errors.py) also when ``stream`` was asked for. These routes are OpenAI's
contract, not plugyard's, so they are not in ``/openapi.json``.
"""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from starlette.responses import Response, StreamingResponse

from plugyard.errors import PlugyardError
from plugyard.llm import LlmError, model_name
from plugyard.routing.chat import DEFAULT_MAX_TOKENS
from plugyard.server.auth import authenticate
from plugyard.server.errors import json_response
from plugyard.server.inputs import read_json
from plugyard.server.openai_wire import (
    chunk_events,
    completion_body,
    conversation_of,
    models_body,
    read_body,
)
from plugyard.store.keys import Principal
from plugyard.yard import Yard
from plugyard.yard.model_gate import GatedChatFlow

router = APIRouter(include_in_schema=False)
#: A model id every yard answers to, whichever model it is configured with.
ALIAS = "plugyard"
#: The model layer's codes as a client of this endpoint reads them: the operator's
#: outbound rules are no business of the client's, the server is just unreachable.
_MODEL_CODES = {"llm_timeout": "llm_timeout", "llm_invalid_answer": "llm_invalid_answer",
                "llm_context_exceeded": "llm_context_exceeded",
                "invalid_request": "invalid_request"}  # fmt: skip


def _flow(request: Request) -> GatedChatFlow:
    yard: Yard = request.app.state.yard
    return yard.chat


def _model(flow: GatedChatFlow, principal: Principal) -> str:
    """The model's name, for a caller the policy lets use it (``permission_denied``)."""
    try:
        return model_name(flow.model_for(principal.subject, principal.roles))
    except LlmError as exc:
        raise _refusal(exc) from None


def _refusal(exc: LlmError) -> PlugyardError:
    return PlugyardError(exc.message, code=_MODEL_CODES.get(exc.code, "llm_unavailable"))


@router.get("/v1/models")
async def models(request: Request) -> Response:
    principal = authenticate(request)
    return json_response(models_body(_model(_flow(request), principal)))


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    principal = authenticate(request)
    body = read_body(await read_json(request))
    flow = _flow(request)
    name = _model(flow, principal)
    if body.model not in (name, ALIAS):
        raise PlugyardError(
            f"this server answers with model {name!r} (or {ALIAS!r}), not {body.model!r}",
            code="model_not_found",
        )
    conversation = conversation_of(body, DEFAULT_MAX_TOKENS)
    try:
        done = await flow.complete(conversation, subject=principal.subject, roles=principal.roles)
    except LlmError as exc:
        raise _refusal(exc) from None
    created = int(time.time())
    if not body.stream:
        return json_response(completion_body(done, created))
    usage = body.stream_options is not None and body.stream_options.include_usage
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(chunk_events(done, created, usage), media_type="text/event-stream",
                             headers=headers)  # fmt: skip
