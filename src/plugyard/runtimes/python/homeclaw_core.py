"""What a HomeClaw built-in needs of HomeClaw's core, read from its source.

HomeClaw's Python built-ins are ``BasePlugin`` subclasses constructed with HomeClaw's
core object (``coreInst``) and importing HomeClaw's own modules (``base.BasePlugin``,
``base.util``, ``core.coreInterface``). None of that exists outside a HomeClaw process,
so such a plugin cannot load here; rather than a bare ``No module named 'base'``, the
refusal names exactly what the code reaches for: the HomeClaw modules it imports, the
members of the core object it uses (``self.coreInst.<member>``) and the ``Util()``
helpers it calls (HomeClaw's model access among them). Read statically: nothing runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

#: HomeClaw's top-level packages a built-in imports from its host.
HOMECLAW_PACKAGES = frozenset({"base", "core"})


def core_needs(source: Path) -> str | None:
    """The refusal for a HomeClaw built-in in ``source`` (``None``: not one)."""
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    modules: set[str] = set()
    members: set[str] = set()
    helpers: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in HOMECLAW_PACKAGES:
                modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.split(".")[0] in HOMECLAW_PACKAGES)
        elif isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "coreInst":
                members.add(node.attr)
            elif (
                isinstance(owner, ast.Call)
                and isinstance(owner.func, ast.Name)
                and owner.func.id == "Util"
            ):
                helpers.add(node.attr)
    if not modules:
        return None
    parts = [f"imports {', '.join(sorted(modules))}"]
    if members:
        parts.append(f"uses the core object's {', '.join(sorted(members))}")
    if helpers:
        parts.append(f"calls Util().{', Util().'.join(sorted(helpers))}")
    return (
        "a HomeClaw built-in that needs HomeClaw's core, which only a HomeClaw process "
        f"has: it {'; '.join(parts)}"
    )
