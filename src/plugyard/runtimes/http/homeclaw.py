"""HomeClaw's external-plugin envelope: the ``PluginRequest`` its Core posts, and the
``PluginResult`` its plugins answer.

A HomeClaw plugin server dispatches on ``capability_id`` and reads its arguments from
``capability_parameters``; posted the bare parameters it would run its default
capability with none. So an http plugin read from a HomeClaw document (envelope
``homeclaw``) gets the request HomeClaw's Core builds:

- ``request_id``, ``plugin_id`` (the id lower-cased, spaces as ``_``, as Core keys it),
  ``capability_id`` and ``capability_parameters``;
- ``user_id`` from the authenticated subject (never from the body), and the caller's
  message and channel members from ``user_context`` (``user_input`` or ``message``,
  ``user_name``, ``channel_name``, ``channel_type``, ``app_id``, ``chat_context``): data
  for the plugin, which Core also sends;
- ``metadata``: Core's request metadata, which repeats the capability and parameters.

The answer must be a ``PluginResult`` object with a boolean ``success``: ``true`` is the
data ``{"text", "metadata"}``; ``false`` is ``plugin_error`` carrying the plugin's own
``error`` text (never a success). An object without ``success`` is ``invalid_output``
naming the convention: HomeClaw's model would silently default it to a success.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome

CONVENTION = "HomeClaw PluginResult"
_CONTEXT_MEMBERS = ("user_name", "channel_name", "channel_type", "app_id")


def plugin_request(
    plugin_id: str, capability_id: str, params: Mapping[str, Any], context: CallContext
) -> dict[str, Any]:
    """The ``PluginRequest`` HomeClaw's Core posts for one capability call."""
    given = context.user_context
    metadata = {"capability_id": capability_id, "capability_parameters": dict(params)}
    request: dict[str, Any] = {
        "request_id": context.request_id,
        "plugin_id": plugin_id.strip().lower().replace(" ", "_"),
        "user_input": _text(given.get("user_input", given.get("message"))),
        "user_id": context.subject or "",
    }
    request.update({name: _text(given.get(name)) for name in _CONTEXT_MEMBERS})
    chat = given.get("chat_context")
    request["chat_context"] = chat if isinstance(chat, str) else None
    request["metadata"] = metadata
    request["capability_id"] = capability_id
    request["capability_parameters"] = dict(params)
    return request


def read_plugin_result(value: Any) -> Outcome:
    """The outcome a ``PluginResult`` body stands for (see the module docstring)."""
    if not isinstance(value, dict):
        return _bad(f"a {CONVENTION} is a JSON object, not {type(value).__name__}", "")
    success = value.get("success")
    if not isinstance(success, bool):
        found = "no" if "success" not in value else f"a {type(success).__name__}"
        return _bad(f"the {CONVENTION} has {found} boolean 'success'", "/success")
    text = value.get("text")
    if text is not None and not isinstance(text, str):
        return _bad(f"the {CONVENTION}'s 'text' is not a string", "/text")
    metadata = value.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return _bad(f"the {CONVENTION}'s 'metadata' is not an object", "/metadata")
    data = {"text": text or "", "metadata": metadata or {}}
    if success:
        return Outcome(data=data)
    error = value.get("error")
    message = error if isinstance(error, str) and error else (text or "the plugin failed")
    return Outcome(
        status="error",
        error=ErrorInfo("plugin_error", message, {"convention": CONVENTION, **data}),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _bad(message: str, pointer: str) -> Outcome:
    details = {"convention": CONVENTION, "pointer": pointer}
    return Outcome(status="error", error=ErrorInfo("invalid_output", message, details))
