"""Run an operation from its generated form, as the signed-in viewer.

The call goes through the executor like any other (policy, approvals, secrets,
validation, audit), with the viewer's subject and roles. A post that asks for
``text/event-stream`` (the page's script does, for streaming operations) is answered
with server-sent events: ``progress`` as the plugin yields it, then ``result`` whose
data is the result already rendered as HTML (escaped here, so the script only places
it). A ``pending_approval`` keeps its receipt in the session, for the approvals page.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from plugyard.console.forms.schema_form import Form, build_form
from plugyard.console.forms.submission import Submission, read_submission
from plugyard.console.results import view
from plugyard.console.security import page_headers
from plugyard.console.web import ConsoleRoute, Viewer, console_of, posted, render, viewer
from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.manifest.model import Operation
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


def visible_plugin(request: Request, who: Viewer, plugin_id: str) -> RegisteredPlugin:
    """The plugin, or ``plugin_not_found`` — also when the viewer may call none of it."""
    yard = console_of(request).yard
    plugin = yard.registry.find(plugin_id)
    if plugin is None or not yard.visible(plugin, yard.rights(who.subject, who.roles)):
        raise PlugyardError(f"no plugin {plugin_id!r}", code="plugin_not_found")
    return plugin


def callable_plugin(request: Request, who: Viewer, plugin_id: str) -> RegisteredPlugin:
    """The plugin a post asks to call. One the viewer may not call is refused with the
    code the REST execute route answers for it (``permission_denied``), before anything
    of it is shown; pages that only show a plugin keep :func:`visible_plugin`."""
    yard = console_of(request).yard
    plugin = yard.registry.find(plugin_id)
    if plugin is None:
        raise PlugyardError(f"no plugin {plugin_id!r}", code="plugin_not_found")
    if not yard.visible(plugin, yard.rights(who.subject, who.roles)):
        raise PlugyardError(f"{who.subject!r} may call no operation of {plugin_id!r}",
                            code="permission_denied")  # fmt: skip
    return plugin


def operation_of(plugin: RegisteredPlugin, operation: str) -> Operation:
    found = plugin.descriptor.operation(operation)
    if found is None:
        raise PlugyardError(f"{plugin.id} has no operation {operation!r}",
                            code="operation_not_found")  # fmt: skip
    return found


def _page(request: Request, who: Viewer, plugin: RegisteredPlugin, op: Operation, form: Form,
          *, submission: Submission | None = None, result: dict[str, Any] | None = None,
          status: int = 200) -> Response:  # fmt: skip
    return render(
        request, "run.html", who=who, status=status, plugin=plugin.descriptor, op=op, form=form,
        values=submission.values if submission else {},
        errors=submission.errors if submission else {},
        debug=bool(submission and submission.values.get("__debug")), r=result,
    )  # fmt: skip


@router.get("/console/plugins/{plugin_id}/run/{operation}")
async def run_form(plugin_id: str, operation: str, request: Request) -> Response:
    who = viewer(request)
    plugin = visible_plugin(request, who, plugin_id)
    op = operation_of(plugin, operation)
    return _page(request, who, plugin, op, build_form(op.parameters))


@router.post("/console/plugins/{plugin_id}/run/{operation}")
async def run(plugin_id: str, operation: str, request: Request) -> Response:
    who = viewer(request)
    form_data = await posted(request, who)
    plugin = callable_plugin(request, who, plugin_id)
    op = operation_of(plugin, operation)
    form = build_form(op.parameters)
    submission = read_submission(form, form_data)
    streaming = "text/event-stream" in request.headers.get("accept", "")
    if not submission.ok:
        if streaming:
            return _events_of_errors(request, submission)
        return _page(request, who, plugin, op, form, submission=submission, status=422)
    call = _call(who, plugin.id, op.id, submission)
    executor = console_of(request).yard.executor
    if streaming:
        return _stream(request, who, call)
    result = await executor.call(call)
    _keep_receipt(request, who, call, result)
    return _page(request, who, plugin, op, form, submission=submission, result=view(result))


def _call(who: Viewer, plugin_id: str, op: str, submission: Submission,
          receipt: str | None = None) -> CallRequest:  # fmt: skip
    context = CallContext(
        request_id=new_request_id(),
        subject=who.subject,
        roles=who.roles,
        debug=bool(submission.values.get("__debug")),
    )
    return CallRequest(plugin_id, op, submission.params, context, approval_receipt=receipt)


def _keep_receipt(request: Request, who: Viewer, call: CallRequest, result: Result) -> None:
    if result.status != "pending_approval" or not isinstance(result.data, dict):
        return
    action_id, receipt = result.data.get("action_id"), result.data.get("receipt")
    if isinstance(action_id, str) and isinstance(receipt, str):
        held = {"receipt": receipt, "plugin_id": call.plugin_id, "operation": call.operation,
                "params": call.params}  # fmt: skip
        console_of(request).sessions.remember(who.session_id, who.session, action_id, held)


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _fragment(request: Request, name: str, **context: Any) -> str:
    template = console_of(request).templates.get_template(name)
    return template.render(**context)


def _stream(request: Request, who: Viewer, call: CallRequest) -> StreamingResponse:
    executor = console_of(request).yard.executor

    async def events() -> AsyncIterator[bytes]:
        async for item in executor.stream(call):
            if isinstance(item, Result):
                _keep_receipt(request, who, call, item)
                html = _fragment(request, "_result.html", r=view(item))
                yield _event("result", {"status": item.status, "html": html})
            else:
                yield _event("progress", item.to_dict())

    headers = {**page_headers(), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def _events_of_errors(request: Request, submission: Submission) -> StreamingResponse:
    """A streamed post whose values are of the wrong type: one ``invalid`` event."""
    html = _fragment(request, "_form_errors.html", errors=submission.errors)

    async def events() -> AsyncIterator[bytes]:
        yield _event("invalid", {"errors": submission.errors, "html": html})

    return StreamingResponse(events(), media_type="text/event-stream", headers=page_headers())
