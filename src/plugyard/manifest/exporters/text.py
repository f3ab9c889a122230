"""Render exported documents as text: JSON, YAML (multi-document) or a Python manifest."""

from __future__ import annotations

import json
import pprint
from collections.abc import Sequence
from typing import Any, Literal

import yaml

Syntax = Literal["json", "yaml", "python"]
SYNTAXES: tuple[Syntax, ...] = ("json", "yaml", "python")
#: The syntax each dialect is usually written in.
DEFAULT_SYNTAX: dict[str, Syntax] = {
    "olo": "yaml", "homeclaw": "yaml", "mrp": "json", "shu": "python", "canonical": "json",
    "openai": "json", "anthropic": "json", "mcp": "json",
}  # fmt: skip


class _Dumper(yaml.SafeDumper):
    """Block style, and no anchors: an exported manifest must read on its own."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render(documents: Sequence[Any], syntax: Syntax, *, as_list: bool = False) -> str:
    """``documents`` as one text. ``as_list`` keeps a JSON list even for one document."""
    if syntax == "json":
        payload = list(documents) if (as_list or len(documents) != 1) else documents[0]
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    if syntax == "yaml":
        return yaml.dump_all(
            documents, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
        )
    if len(documents) != 1:
        raise ValueError("a Python manifest holds one document")
    body = pprint.pformat(documents[0], indent=4, width=96, sort_dicts=False)
    return f"PLUGIN_MANIFEST = {body}\n"
