"""A pipeline drawn as SVG on the server: capabilities top to bottom, each a band with its
stages in order; a group a frame with its slots (if, for each, fork, join), its children
and its else. The same document's Mermaid text (``pipelines/mermaid.py``) is shown beside
it for anyone who renders Mermaid elsewhere: drawing here needs no JavaScript library.

Every label is escaped; the drawing reads only the document, so a half-built pipeline
in the editor draws too, and size is bounded (:data:`MAX_NODES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

WIDTH = 640
ROW = 26
GAP = 12
INSET = 16
MAX_NODES = 400
_SLOT_LABEL = {"condition": "if", "iterator": "for each", "fork": "fork", "join": "join"}


class _Canvas:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.nodes = 0

    def box(self, x: float, y: float, w: float, h: float, cls: str) -> None:
        self.parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" class="{cls}"/>')

    def text(self, x: float, y: float, label: str, cls: str = "t") -> None:
        shown = label if len(label) <= 70 else label[:69] + "…"
        self.parts.append(f'<text x="{x}" y="{y}" class="{cls}">{escape(shown)}</text>')

    def arrow(self, x: float, y1: float, y2: float) -> None:
        self.parts.append(
            f'<line x1="{x}" y1="{y1}" x2="{x}" y2="{y2}" class="a" marker-end="url(#arrow)"/>'
        )


def _label(node: Any) -> str:
    if isinstance(node, str):
        return node
    if not isinstance(node, Mapping):
        return "?"
    if "plugin" in node:
        plugin, ident = str(node["plugin"]), node.get("id")
        op = f".{node['operation']}" if node.get("operation") else ""
        return f"{ident}: {plugin}{op}" if ident and ident != plugin else f"{plugin}{op}"
    if "pipeline" in node:
        return f"pipeline {node['pipeline']}"
    return "?"


def _slot_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_label(v) for v in value)
    return _label(value)


def _flow(c: _Canvas, items: Any, x: float, y: float, w: float) -> float:
    """Draw ``items`` from ``y``; answers the y below the last."""
    if not isinstance(items, list) or not items:
        c.text(x + 8, y + 17, "(empty)", "m")
        return y + ROW
    for index, item in enumerate(items):
        if c.nodes >= MAX_NODES:
            c.text(x + 8, y + 17, "… (more not drawn)", "m")
            return y + ROW
        c.nodes += 1
        if index:
            c.arrow(x + w / 2, y - GAP, y)
        if isinstance(item, Mapping) and "plugin" not in item and "pipeline" not in item:
            y = _group(c, item, x, y, w)
        else:
            c.box(x, y, w, ROW, "n")
            c.text(x + 8, y + 17, _label(item))
            y += ROW
        y += GAP
    return y - GAP


def _group(c: _Canvas, group: Mapping[str, Any], x: float, y: float, w: float) -> float:
    start = y
    parts: list[str] = c.parts
    mark = len(parts)  # the frame goes under its content: drawn last, inserted here
    title = f"group {group.get('id') or ''} ({str(group.get('mode') or 'SYNC').upper()})"
    c.text(x + 8, y + 17, title.replace("  ", " "), "g")
    y += ROW
    for slot, label in _SLOT_LABEL.items():
        if group.get(slot):
            c.text(x + 8, y + 15, f"{label}: {_slot_text(group[slot])}", "s")
            y += ROW - 6
    y = _flow(c, group.get("children"), x + INSET, y + 4, w - 2 * INSET) + 8
    if group.get("else"):
        c.text(x + 8, y + 15, "else:", "s")
        y = _flow(c, group.get("else"), x + INSET, y + ROW - 4, w - 2 * INSET) + 8
    frame = f'<rect x="{x}" y="{start}" width="{w}" height="{y - start}" rx="6" class="f"/>'
    parts.insert(mark, frame)
    return y


def svg(document: Mapping[str, Any], title: str = "pipeline") -> str:
    """The document's pipeline (its top level, else each named pipeline) as SVG text."""
    c = _Canvas()
    y = 10.0
    chosen: list[tuple[str, Any]] = []
    if isinstance(document.get("capabilities"), list):
        chosen.append((str(document.get("name") or title), document))
    pipelines = document.get("pipelines")
    if isinstance(pipelines, Mapping):
        chosen.extend((str(k), v) for k, v in pipelines.items() if isinstance(v, Mapping))
    for name, pipeline in chosen:
        c.text(10, y + 16, f"pipeline {name}", "h")
        y += ROW
        for block in pipeline.get("capabilities") or []:
            if not isinstance(block, Mapping):
                continue
            c.box(10, y, WIDTH - 20, ROW - 4, "c")
            c.text(18, y + 16, str(block.get("capability", "?")), "ct")
            y = _flow(c, block.get("flow"), 30, y + ROW + 4, WIDTH - 60) + GAP + 6
    height = max(y + 10, 60)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'width="{WIDTH}" height="{height:.0f}" class="pipeline-diagram" role="img" '
        'aria-labelledby="diagram-title">'
        f'<title id="diagram-title">Diagram of {escape(title)}</title>'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto"><path d="M0 0L10 5L0 10z"/></marker></defs>'
    )
    return head + "".join(c.parts) + "</svg>"
