"""Pipelines: the stored ones, and the editor — a palette for the capability being edited
(its plugins, ``ALL`` ones included, then *Undefined*; Flow/Control components by role,
apart), the document as a tree of slots to drop components into (judged by the engine's
rules, console/editor.py), its diagram, validation, saving, and a run with its trace.

The editor's state is the document text in its form, so a page reload, a second tab or a
browser without script all work the same; the page's script only posts the same edits
and places the answer.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from plugyard.console import diagram
from plugyard.console.editor import (
    GROUPS,
    Edited,
    drop,
    read_document,
    remove,
    starter,
    write_document,
)
from plugyard.console.results import pretty
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
from plugyard.errors import PlugyardError
from plugyard.manifest.model import PIPELINE_CAPABILITIES
from plugyard.pipelines.palette import palette_view
from plugyard.pipelines.validate import validate

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
_CAPABILITY_TEXT = 100


@router.get("/console/pipelines")
async def pipelines(request: Request) -> Response:
    who = viewer(request)
    service = console_of(request).yard.pipelines
    mine = service.runs(limit=20, subject=who.subject, roles=who.roles)
    runs = [r.to_dict(context=False) for r in mine]
    return render(request, "pipelines.html", who=who, stored=service.list(), runs=runs)


def _title(document: dict[str, Any]) -> str:
    return str(document.get("name") or "draft")


def _capabilities(document: dict[str, Any]) -> list[str]:
    blocks = document.get("capabilities")
    names = [str(b.get("capability")) for b in blocks or [] if isinstance(b, dict)]
    return list(dict.fromkeys(names))


def _editor(request: Request, who: Viewer, document: dict[str, Any], capability: str | None,
            *, status: int = 200, **extra: Any) -> Response:  # fmt: skip
    yard = console_of(request).yard
    names = _capabilities(document)
    chosen = capability if capability in names else (names[0] if names else "MODEL")
    shows = yard.shows(who.subject, who.roles)
    shown = [p for p in yard.registry.list() if shows(p)]
    view = palette_view(shown, [chosen])
    checked = validate(document, yard.registry)
    try:
        mermaid = yard.pipelines.diagram(document)
    except PlugyardError:
        mermaid = None
    return render(
        request, "editor.html", who=who, status=status, document=document,
        text=write_document(document), capability=chosen, capabilities=names,
        palette=view, groups=tuple(GROUPS), known=PIPELINE_CAPABILITIES,
        validation=checked.to_dict(), svg=diagram.svg(document, _title(document)),
        mermaid=mermaid, **extra,
    )  # fmt: skip


@router.get("/console/pipelines/editor")
async def editor(request: Request) -> Response:
    who = viewer(request)
    name = request.query_params.get("name")
    capability = request.query_params.get("capability")
    if name:
        document = dict(console_of(request).yard.pipelines.get(name).document)
    else:
        document = starter(capability if capability in PIPELINE_CAPABILITIES else "MODEL")
    return _editor(request, who, document, capability)


def _json_answer(request: Request, who: Viewer, edited: Edited, capability: str) -> Response:
    """What the editor's script places: the document, the tree and the diagram again."""
    document = edited.document
    console = console_of(request)
    tree = console.templates.get_template("_tree.html").render(
        document=document, capability=capability, csrf=who.session.csrf
    )
    body: dict[str, Any] = {
        "ok": edited.refused is None,
        "document": write_document(document),
        "tree": tree,
        "diagram": diagram.svg(document, _title(document)),
    }
    if edited.refused is not None:
        body.update(code=edited.refused.code, message=edited.refused.message,
                    pointer=edited.pointer)  # fmt: skip
    return JSONResponse(body, status_code=200 if edited.refused is None else 422,
                        headers=page_headers())  # fmt: skip


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


@router.post("/console/pipelines/editor")
async def edit(request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    op = _text(form, "op")
    capability = _text(form, "capability")[:_CAPABILITY_TEXT]
    document = read_document(_text(form, "document"))
    yard = console_of(request).yard
    wants_json = "application/json" in request.headers.get("accept", "")
    if op in ("drop", "remove"):
        if op == "drop":
            edited = drop(document, _text(form, "slot"), _text(form, "component"), yard.registry)
        else:
            edited = remove(document, _text(form, "pointer"))
        if wants_json:
            return _json_answer(request, who, edited, capability)
        refusal = None
        if edited.refused is not None:
            refusal = {"code": edited.refused.code, "message": edited.refused.message}
        return _editor(request, who, edited.document, capability, refusal=refusal,
                       status=422 if refusal else 200)  # fmt: skip
    if op == "add_capability":
        name = _text(form, "new_capability").strip()
        if not name or len(name) > _CAPABILITY_TEXT or " " in name:
            raise PageRefused("a capability name is one word", code="invalid_request")
        document.setdefault("capabilities", []).append({"capability": name, "flow": []})
        return _editor(request, who, document, name)
    if op == "save":
        stored = yard.pipelines.save(document, name=_text(form, "name").strip() or None,
                                     subject=who.subject, roles=who.roles)  # fmt: skip
        return _editor(request, who, document, capability, saved=stored.name)
    if op == "run":
        return await _run(request, who, document, capability, _text(form, "input"))
    return _editor(request, who, document, capability)


async def _run(request: Request, who: Viewer, document: dict[str, Any], capability: str,
               input_text: str) -> Response:  # fmt: skip
    try:
        given = json.loads(input_text or "{}")
    except ValueError as exc:
        raise PageRefused(f"input: not valid JSON: {exc}", code="invalid_request") from None
    if not isinstance(given, dict):
        raise PageRefused("input: a JSON object", code="invalid_request")
    service = console_of(request).yard.pipelines
    run = await service.run(document, given, subject=who.subject, roles=who.roles)
    shown = run.to_dict()
    return _editor(request, who, document, capability, run=shown,
                   run_context=pretty(shown.get("context")), input_text=input_text)  # fmt: skip
