"""RFC 6901 JSON pointers: building them and reading values at them."""

from __future__ import annotations

from typing import Any


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_join(pointer: str, *tokens: str | int) -> str:
    return pointer + "".join("/" + escape(token) for token in tokens)


def split(pointer: str) -> list[str]:
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer``; raises ``KeyError`` when there is none."""
    node = document
    for token in split(pointer):
        if isinstance(node, dict):
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node


def put(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Set ``value`` at ``pointer``, creating the mappings on the way."""
    tokens = split(pointer)
    if not tokens:
        raise ValueError("cannot replace the whole document")
    node: Any = document
    for token in tokens[:-1]:
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict):
            node = node.setdefault(token, {})
        else:
            return
    last = tokens[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and last.isdigit():
        index = int(last)
        if index <= len(node):
            node.insert(index, value)
