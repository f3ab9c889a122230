"""The pipeline editor's edits: drop a component into a slot, remove a node.

A drop is judged by the engine's own validation (:func:`plugyard.pipelines.validate`)
run on the document *with* the component in place: when a fault lands on the new node —
a CONDITION outside a condition slot (``role_misplaced``), a stage outside its
capabilities (``capability_not_allowed``), an ``onlyInsideGroup`` or *Undefined* plugin
at a capability's root (``only_inside_group``, ``undefined_outside_group``) — the drop
is refused with that rule's code and the document stays as it was. The editor never
keeps a rule of its own.

Slots are JSON pointers into the document: a list (a capability's ``flow``, a group's
``children`` or ``else``) takes the component at its end; a group's ``condition``,
``iterator``, ``fork`` or ``join`` takes it as that slot's plugin.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from plugyard.errors import PlugyardError, Problem
from plugyard.manifest import safeload
from plugyard.pipelines.placement import Catalog
from plugyard.pipelines.validate import validate

CONTROL_SLOTS = ("condition", "iterator", "fork", "join")
LISTS = ("flow", "children", "else")
#: The rules a drop can break (docs/pipelines.md, "Faults").
DROP_RULES = frozenset({
    "role_misplaced", "capability_not_allowed", "undefined_outside_group",
    "only_inside_group", "unknown_plugin", "slot_not_allowed",
})  # fmt: skip
GROUPS = {"group:SYNC": {"mode": "SYNC", "children": []},
          "group:ASYNC": {"mode": "ASYNC", "children": []}}  # fmt: skip
MAX_DOCUMENT_CHARS = 200_000


@dataclass(frozen=True)
class Edited:
    """The outcome of one edit: the document (changed or not) and a refusal, if any."""

    document: dict[str, Any]
    refused: Problem | None = None
    pointer: str | None = None  # of the new node


def starter(capability: str) -> dict[str, Any]:
    return {"name": "draft", "capabilities": [{"capability": capability, "flow": []}]}


def read_document(text: str) -> dict[str, Any]:
    """The editor's document text (YAML or JSON) as data, or ``pipeline_invalid``."""
    if len(text) > MAX_DOCUMENT_CHARS:
        raise PlugyardError("the document is too long for the editor", code="pipeline_invalid")
    try:
        documents = safeload.parse(text or "{}").documents
    except PlugyardError as exc:
        raise PlugyardError(exc.message, code="pipeline_invalid") from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise PlugyardError("the document must be one mapping", code="pipeline_invalid")
    return documents[0]


def write_document(document: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(document), sort_keys=False, allow_unicode=True, width=100)


def _walk(document: Any, pointer: str) -> tuple[Any, str]:
    """The container holding the last step of ``pointer``, and that step."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    if not parts:
        raise PlugyardError("no slot named", code="invalid_request")
    here = document
    for part in parts[:-1]:
        here = here[int(part)] if isinstance(here, list) else here.get(part)
        if not isinstance(here, dict | list):
            raise PlugyardError(f"no slot at {pointer!r}", code="invalid_request")
    return here, parts[-1]


def _node(component: str, catalog: Catalog) -> dict[str, Any]:
    if component in GROUPS:
        return copy.deepcopy(GROUPS[component])
    node: dict[str, Any] = {"plugin": component}
    plugin = catalog.find(component)
    if plugin is not None and len(plugin.descriptor.operations) > 1:
        node["operation"] = plugin.descriptor.operations[0].id  # the engine asks to name one
    return node


def drop(document: Mapping[str, Any], slot: str, component: str, catalog: Catalog) -> Edited:
    """``component`` (a plugin id, or ``group:SYNC``/``group:ASYNC``) put into ``slot``."""
    candidate = copy.deepcopy(dict(document))
    try:
        holder, last = _walk(candidate, slot)
    except (IndexError, ValueError, KeyError, AttributeError, TypeError):
        raise PlugyardError(f"no slot at {slot!r}", code="invalid_request") from None
    node = _node(component, catalog)
    if isinstance(holder, dict) and last in LISTS:
        items = holder.setdefault(last, [])
        if not isinstance(items, list):
            raise PlugyardError(f"{slot!r} is not a list", code="invalid_request")
        items.append(node)
        pointer = f"{slot}/{len(items) - 1}"
    elif isinstance(holder, dict) and last in CONTROL_SLOTS:
        if component in GROUPS:
            refusal = Problem("role_misplaced", slot, "a group cannot fill a plugin slot")
            return Edited(dict(document), refusal, slot)
        holder[last] = node
        pointer = slot
    else:
        raise PlugyardError(f"no slot at {slot!r}", code="invalid_request")
    for fault in validate(candidate, catalog).faults:
        at_node = fault.pointer == pointer or fault.pointer.startswith(pointer + "/")
        if at_node and fault.code in DROP_RULES:
            return Edited(dict(document), fault, pointer)
    return Edited(candidate, None, pointer)


def remove(document: Mapping[str, Any], pointer: str) -> Edited:
    """The node at ``pointer`` taken out (a list item, or a group's control slot)."""
    candidate = copy.deepcopy(dict(document))
    try:
        holder, last = _walk(candidate, pointer)
        if isinstance(holder, list):
            del holder[int(last)]
        elif isinstance(holder, dict) and last in CONTROL_SLOTS:
            holder.pop(last, None)
        else:
            raise ValueError(pointer)
    except (IndexError, ValueError, KeyError, AttributeError, TypeError):
        raise PlugyardError(f"no node at {pointer!r}", code="invalid_request") from None
    return Edited(candidate)
