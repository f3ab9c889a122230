"""Any pipeline as a Mermaid flowchart.

Capabilities are subgraphs in run order; a stage is a box (its id and plugin), a group
a subgraph whose condition is a rhombus (``yes`` into the group, ``no`` past it or into
its ``else``), whose iterator is a hexagon the body loops back to, and whose ASYNC
branches fan out of a fork (a parallelogram) into a join (a trapezoid). A call to
another pipeline is a subroutine box. Rendering reads only the document, so it works
for any pipeline, valid or not.
"""

from __future__ import annotations

from typing import Any

from plugyard.errors import PipelineError
from plugyard.pipelines.model import (
    CallModel,
    DocumentModel,
    GroupModel,
    PipelineModel,
    PipelineRefModel,
)

Exits = list[tuple[str, str | None]]
_SHAPES = {
    "box": ('["', '"]'), "sub": ('[["', '"]]'), "rhombus": ('{"', '"}'),
    "hexagon": ('{{"', '"}}'), "fork": ('[/"', '"/]'), "join": ('[\\"', '"\\]'),
    "round": ('(["', '"])'),
}  # fmt: skip


def mermaid(document: DocumentModel, pipeline: str | None = None) -> str:
    """The chosen pipeline (default: the document's entry, else every pipeline)."""
    chosen: list[tuple[str, PipelineModel]] = []
    top = document.name or "main"
    known: dict[str, PipelineModel] = dict(document.pipelines)
    if document.capabilities is not None:
        known = {top: document, **known}
    name = pipeline or document.entry or (top if document.capabilities is not None else None)
    if name is not None:
        if name not in known:
            raise PipelineError(f"no pipeline {name!r} here", code="pipeline_not_found")
        chosen = [(name, known[name])]
    else:
        chosen = list(known.items())
    diagram = _Diagram()
    for title, model in chosen:
        diagram.pipeline(title, model)
    return "\n".join(["flowchart TD", *diagram.lines, *diagram.edges]) + "\n"


def _text(label: str) -> str:
    return label.replace('"', "#quot;").replace("\n", " ")


class _Diagram:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.edges: list[str] = []
        self.count = 0
        self.depth = 1

    def node(self, shape: str, label: str) -> str:
        self.count += 1
        name = f"n{self.count}"
        left, right = _SHAPES[shape]
        self.lines.append(f"{'  ' * self.depth}{name}{left}{_text(label)}{right}")
        return name

    def link(self, exits: Exits, target: str, dotted: bool = False) -> None:
        arrow = "-.->" if dotted else "-->"
        for source, label in exits:
            tag = f"|{_text(label)}|" if label else ""
            self.edges.append(f"  {source} {arrow}{tag} {target}")

    def open(self, title: str) -> None:
        self.count += 1
        self.lines.append(f'{"  " * self.depth}subgraph s{self.count}["{_text(title)}"]')
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self.lines.append(f"{'  ' * self.depth}end")

    def pipeline(self, title: str, model: PipelineModel) -> None:
        start = self.node("round", f"{title}: input")
        exits: Exits = [(start, None)]
        for block in model.capabilities or []:
            self.open(block.capability)
            exits = self.flow(block.flow, exits)[1]
            self.close()
        self.link(exits, self.node("round", f"{title}: output"))

    def flow(self, nodes: list[Any], exits: Exits) -> tuple[str, Exits]:
        """Nodes in sequence after ``exits``: the first one's entry, the last one's exits."""
        if not nodes:
            empty = self.node("round", "nothing")
            self.link(exits, empty)
            return empty, [(empty, None)]
        first = None
        for item in nodes:
            entry, after = self.item(item)
            self.link(exits, entry)
            first = first or entry
            exits = after
        assert first is not None
        return first, exits

    def item(self, item: Any) -> tuple[str, Exits]:
        if isinstance(item, str):
            item = CallModel(plugin=item)
        if isinstance(item, CallModel):
            label = item.plugin if item.id in (None, item.plugin) else f"{item.id}: {item.plugin}"
            name = self.node("box", label)
            return name, [(name, None)]
        if isinstance(item, PipelineRefModel):
            name = self.node("sub", f"pipeline {item.pipeline}")
            return name, [(name, None)]
        assert isinstance(item, GroupModel)
        return self.group(item)

    def group(self, group: GroupModel) -> tuple[str, Exits]:
        self.open(f"{group.id or 'group'} ({group.mode})")
        entry: str | None = None
        skip: Exits = []
        pending: Exits = []
        if group.condition is not None:
            entry = self.node("rhombus", f"if {_slot(group.condition)}")
            pending = [(entry, "yes")]
            skip = [(entry, "no")]
        loop = None
        if group.iterator is not None:
            loop = self.node("hexagon", f"for each: {_slot(group.iterator)}")
            self.link(pending, loop)
            entry = entry or loop
            pending = [(loop, None)]
        if group.mode == "ASYNC":
            # no fork or join named: the built-in ones of engine mode (OLO's engine)
            fork = self.node("fork", f"fork: {_slot(group.fork) if group.fork else 'built-in'}")
            self.link(pending, fork)
            entry = entry or fork
            join = self.node("join", f"join: {_slot(group.join) if group.join else 'built-in'}")
            for child in group.children:
                first, last = self.item(child)
                self.link([(fork, None)], first)
                self.link(last, join)
            body: Exits = [(join, None)]
        else:
            first, body = self.flow(group.children, pending)
            entry = entry or first
        if loop is not None:
            self.link(body, loop, dotted=True)
            body = [(loop, "done")]
        if group.else_:
            body = body + self.flow(group.else_, skip)[1]
            skip = []
        self.close()
        assert entry is not None
        return entry, body + skip


def _slot(slot: Any) -> str:
    if isinstance(slot, list):
        return " + ".join(_slot(s) for s in slot)
    return slot if isinstance(slot, str) else str(slot.plugin)
