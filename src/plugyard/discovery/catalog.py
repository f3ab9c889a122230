"""Registered plugins as the engine's documents: one entry per plugin and one per
operation.

The plugin entry (``doc_id`` = the plugin id) reads like a store listing: its name and
tags, its description, then the long description, what each operation does and the
parameter names. An operation entry (``plugin_id/operation_id``) is the operation seen
in its plugin's context: "Plugin: operation" as the name, the operation's own
description (its plugin's when it has none), then the plugin's description, the
output description and each parameter with its description. Context matters because an
operation text alone ("Get the current conditions") rarely names its subject.

The choices were measured with ``bench/discovery.py --layout`` (bench/RESULTS.md):
the engine scores three fields separately and averages them, so each field holds one
kind of text and the short, precise ones are never concatenated with long ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from plugyard.discovery.documents import Document
from plugyard.manifest.exporters.functions import GENERIC_OPERATIONS
from plugyard.manifest.model import Operation, PluginDescriptor

SEPARATOR = "/"


@dataclass(frozen=True, slots=True)
class EntryKey:
    """What an index entry stands for: a plugin, or one operation of it."""

    plugin_id: str
    operation: str | None = None

    @property
    def doc_id(self) -> str:
        return doc_id(self.plugin_id, self.operation)


def doc_id(plugin_id: str, operation: str | None = None) -> str:
    return plugin_id if operation is None else f"{plugin_id}{SEPARATOR}{operation}"


def _words(identifier: str) -> str:
    return identifier.replace("_", " ").replace("-", " ").strip()


def operation_title(op: Operation) -> str:
    """A readable name: ``name`` when given, the id in words otherwise."""
    return (op.name or _words(op.id)).strip()


def _tags(d: PluginDescriptor) -> tuple[str, ...]:
    topic = d.planner_hints.topic_tags if d.planner_hints is not None else ()
    return tuple(dict.fromkeys(t.strip() for t in (*d.tags, *topic) if t.strip()))


def _properties(op: Operation) -> dict[str, Any]:
    props = op.parameters.get("properties")
    return props if isinstance(props, dict) else {}


def _parameter_texts(op: Operation) -> list[str]:
    out = []
    for name, spec in _properties(op).items():
        described = spec.get("description") if isinstance(spec, dict) else None
        text = _words(name)
        if isinstance(described, str) and described.strip():
            text = f"{text}: {described.strip()}"
        out.append(text)
    return out


def _operation_sentence(op: Operation) -> str:
    """How the plugin entry mentions an operation."""
    description = op.description.strip()
    if op.id in GENERIC_OPERATIONS and not op.name:
        return description
    title = operation_title(op)
    return f"{title}: {description}" if description else title


def plugin_document(d: PluginDescriptor) -> Document:
    names = dict.fromkeys(_words(n) for op in d.operations for n in _properties(op))
    return Document(
        doc_id=d.id,
        name=d.name.strip() or _words(d.id),
        description=d.description,
        description_long=d.description_long,
        operations=tuple(s for s in (_operation_sentence(op) for op in d.operations) if s),
        parameters=tuple(names),
        tags=_tags(d),
    )


def operation_document(d: PluginDescriptor, op: Operation) -> Document:
    plugin_name = d.name.strip() or _words(d.id)
    own = op.description.strip()
    context = [d.description.strip()] if own else []
    if op.output_description:
        context.append(f"Returns {op.output_description.strip()}")
    return Document(
        doc_id=doc_id(d.id, op.id),
        name=f"{plugin_name}: {operation_title(op)}",
        description=own or d.description,
        description_long=" ".join(c for c in context if c) or None,
        parameters=tuple(_parameter_texts(op)),
        tags=_tags(d),
    )


def documents(d: PluginDescriptor) -> list[tuple[EntryKey, Document]]:
    """The plugin's entry first, then one per operation."""
    out = [(EntryKey(d.id), plugin_document(d))]
    out.extend((EntryKey(d.id, op.id), operation_document(d, op)) for op in d.operations)
    return out


def all_documents(
    descriptors: Iterable[PluginDescriptor],
) -> list[tuple[EntryKey, Document]]:
    return [pair for d in descriptors for pair in documents(d)]
