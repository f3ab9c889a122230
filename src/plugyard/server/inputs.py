"""What requests carry: the documented request bodies, and the JSON reader of the routes
that read their body themselves.

A body model is the OpenAPI document of its body and, where FastAPI reads it, its
validator too. Models are strict, as JSON Schema is: ``"5"`` is not a number and
``1`` is not a boolean; an integer may be written ``5.0`` (:data:`TimeoutMs`), since
JSON Schema counts it as one.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from fastapi import Request
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from plugyard.errors import PlugyardError
from plugyard.routing.failures import MAX_MESSAGE_CHARS
from plugyard.routing.flow import DEFAULT_K, DEFAULT_MAX_STEPS
from plugyard.server.errors import is_json
from plugyard.server.faults import InvalidRequest, fault

_decode = msgspec.json.Decoder().decode
MAX_TIMEOUT_MS = 3_600_000


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _wire_integer(value: Any) -> Any:
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise ValueError("an integer: digits, with a sign or none")
    return value


_DIGITS = re.compile(r"[+-]?[0-9]+")
#: An integer in a query is its digits (pydantic would also read ``1_0``, `` 1`` and
#: ``1.0``, which no JSON Schema reading of the text allows). Placed after ``Query``,
#: whose bounds pydantic can then still write into the schema.
DIGITS = BeforeValidator(_wire_integer)
#: A call's deadline in milliseconds, an integer as JSON Schema reads one: ``5`` or
#: ``5.0``, never ``"5"`` or ``true`` (the bounds before the validator, or pydantic cannot
#: write them into the schema).
TimeoutMs = Annotated[int, Field(ge=1, le=MAX_TIMEOUT_MS), BeforeValidator(_integral)]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def optional(description: str | None = None) -> Any:
    """A member that may be left out but is never ``null``. Its field is typed as its
    value, so that pydantic refuses a ``null`` sent (one fault, at the member) and the
    schema says the type alone; left out, it reads ``None``, which pydantic does not
    validate."""
    return Field(default=None, description=description, json_schema_extra=_no_default)


#: A capability name to filter by: letters first, then letters, digits, ``_ . -``.
CapabilityName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")]
# What ``str.strip`` takes away, written out: JSON Schema's ``\s`` is another set.
_SPACE = "\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: A search query: some text that is not all white space (discovery/query.py).
SearchText = Annotated[str, Field(min_length=1, max_length=4000, pattern=f"[^{_SPACE}]")]


class Strict(BaseModel):
    model_config = ConfigDict(strict=True)


class ExecuteBody(Strict):
    """The Shu execute request, with plugyard's optional members. An optional member is
    left out: none of them takes ``null``. Read by hand (routes/execute.py) with exactly
    these verdicts."""

    model_config = ConfigDict(extra="allow")

    parameters: dict[str, Any] = Field(default_factory=dict)
    user_context: dict[str, Any] = Field(default_factory=dict)
    operation: str = optional("Which operation; may be left out when there is one.")
    timeout_ms: TimeoutMs = optional()
    debug: bool = False
    approval_receipt: str = optional(
        "The receipt a `pending_approval` result handed out, once approved: the call runs "
        "if it is this exact request (send the `Idempotency-Key` header to make retries "
        "safe)."
    )
    search_id: str = optional(
        "The `search_id` of the search that found this plugin: when the call succeeds, "
        "discovery remembers that the search's request was answered by this operation "
        "(docs/discovery.md)."
    )


class FeedbackBody(Strict):
    """Whether a plugin (an operation of it) answered the search's request."""

    model_config = ConfigDict(strict=True, extra="forbid")

    plugin: str = Field(min_length=1, max_length=200)
    operation: str = optional("Which operation answered; left out: the plugin as a whole.")
    helpful: bool = True


class ActionBody(Strict):
    """A Shu action: its arguments, and the receipt once an approval was granted."""

    args: dict[str, Any] = Field(default_factory=dict)
    approval_receipt: str = optional()


class RunBody(Strict):
    """A pipeline run: the document inline or the name of a stored one."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["document"]}, {"required": ["name"]}]}
    )

    document: dict[str, Any] = optional("A pipeline document (plugyard's format or an OLO config).")
    name: str = optional("A stored pipeline.")
    input: dict[str, Any] = optional("The run's input: the context the pipeline starts from.")
    pipeline: str = optional("The entry pipeline of a document that holds several.")
    timeout_ms: TimeoutMs = optional()

    @model_validator(mode="after")
    def _one_source(self) -> RunBody:
        if self.document is None and self.name is None:
            raise ValueError("give a 'document' or the 'name' of a stored one")
        return self


#: A routed request (routing/flow.py): some text that is not all white space.
AskText = Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=f"[^{_SPACE}]")]


class AskBody(Strict):
    """A request for the routing flow. Who asks is the API key's subject: members that
    claim another identity (``subject``, ``roles``, ``user``) are not read."""

    model_config = ConfigDict(extra="allow")

    message: AskText = Field(description="What the user asks, in plain words.")
    k: Annotated[int, Field(ge=1, le=50), BeforeValidator(_integral)] = Field(
        default=DEFAULT_K, description="How many operations each step offers the model."
    )
    max_steps: Annotated[int, Field(ge=1, le=10), BeforeValidator(_integral)] = Field(
        default=DEFAULT_MAX_STEPS, description="How many calls the request may make."
    )


class ConfirmBody(Strict):
    """The caller confirms a call an ask held back (``pending_confirmation``). Only the
    subject it was held for may confirm it: the key's, never a member of the body."""

    receipt: str = Field(min_length=1, max_length=200,
                         description="The `pending.receipt` of the held answer.")  # fmt: skip


def header(request: Request, name: bytes) -> str | None:
    """One header's value (``name`` in lower case, as ASGI servers give names), read
    straight from the scope: Starlette's ``Headers.get`` costs a microsecond a look-up on
    the hot route, and raises and catches a ``KeyError`` for every header not sent."""
    for key, value in request.scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def read_json(request: Request, *, empty: Any = None) -> Any:
    """The request body as JSON: ``unsupported_media_type`` unless it says JSON,
    ``invalid_request`` when it does not parse. An empty body is ``empty`` (when given)."""
    raw = await request.body()
    if not raw and empty is not None:
        return empty
    if not is_json(header(request, b"content-type") or ""):
        raise PlugyardError("the body must be application/json", code="unsupported_media_type")
    try:
        return _decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidRequest([fault("/body", f"the body is not JSON: {exc}")]) from None
    except RecursionError:
        raise InvalidRequest([fault("/body", "the body nests too deeply")]) from None


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON Schema for ``openapi_extra``; its ``$defs`` move to the document's
    components (server/openapi.py), where its references point."""
    return model.model_json_schema(ref_template="#/components/schemas/{model}")
