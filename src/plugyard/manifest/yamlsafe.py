"""YAML for untrusted manifests: the YAML 1.2 core schema's scalars, JSON-compatible tags
only, and size, depth and alias expansion bounded on the node graph before anything is
constructed, so an alias bomb or a deeply nested document costs a bounded amount of work.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.pointer import pointer_join

MAX_DEPTH = 64
MAX_NODES = 100_000

_STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge")
)


class NumberText(float):
    """A float that remembers how it was written, so ``version: 1.10`` is not ``1.1``."""

    text: str

    def __new__(cls, text: str) -> NumberText:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag.endswith((":null", ":int", ":float"))]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _construct_float(loader: yaml.SafeLoader, node: ScalarNode) -> float:
    value = loader.construct_yaml_float(node)
    if math.isfinite(value):
        return NumberText(str(node.value).replace("_", ""))
    return float(value)


_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def _check_nodes(root: Node, document: int) -> list[Problem]:
    """Bound size and depth (aliases expanded) and vet tags and keys, without recursion.

    Sizes and depths are memoised per node, so a shared (aliased) node is measured once
    however often it is referenced: an alias bomb is caught in linear time.
    """
    problems: list[Problem] = []
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, str, bool]] = [(root, "", False)]
    while stack:
        node, pointer, finished = stack.pop()
        ident = id(node)
        kids = _children(node)
        if finished:
            on_path.discard(ident)
            size[ident] = 1 + len(kids) + sum(size[id(k)] for k in kids)
            depth[ident] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[ident] > MAX_NODES:
                return [Problem("manifest_too_large", pointer, "too many nodes", document)]
            if depth[ident] > MAX_DEPTH:
                return [Problem("manifest_too_deep", pointer, "nesting too deep", document)]
            continue
        if ident in on_path:
            return [Problem("manifest_syntax", pointer, "recursive alias", document)]
        if ident in size:
            continue
        if node.tag not in _STANDARD_TAGS:
            problems.append(Problem("manifest_yaml_tag", pointer, f"tag {node.tag!r}", document))
        on_path.add(ident)
        stack.append((node, pointer, True))
        if isinstance(node, MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                child = pointer
                if key.tag == "tag:yaml.org,2002:merge":
                    pass
                elif not isinstance(key, ScalarNode) or key.tag != "tag:yaml.org,2002:str":
                    problems.append(
                        Problem("manifest_invalid_key", pointer, "key is not a string", document)
                    )
                else:
                    child = pointer_join(pointer, key.value)
                    if key.value in keys:
                        problems.append(
                            Problem("manifest_duplicate_key", child, "key repeated", document)
                        )
                    keys.add(key.value)
                stack.append((value, child, False))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                stack.append((item, pointer_join(pointer, index), False))
    return problems


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [value for _, value in node.value]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str) -> tuple[list[Any], list[Problem]]:
    """Parse a YAML stream, repairing the one fault hand-written manifests often have.

    A plain scalar holding ": " (``description: Use for: mail``) is invalid YAML. Where a
    ``key: value`` line fails that way, the value is re-read as a quoted string and a
    ``yaml_repaired`` warning names the line; any other fault is an error.
    """
    warnings: list[Problem] = []
    for _ in range(_MAX_REPAIRS):
        try:
            return _load_stream(text), warnings
        except _Unquoted as fault:
            lines = text.split("\n")
            match = _KEY_VALUE.match(lines[fault.line])
            if match is None:
                raise fault.error from None
            lines[fault.line] = match.group(1) + json.dumps(match.group(2).rstrip())
            text = "\n".join(lines)
            warnings.append(
                Problem("yaml_repaired", "", f"line {fault.line + 1}: value read as quoted text")
            )
    raise ManifestError([Problem("manifest_syntax", "", "too many unquoted values")])


class _Unquoted(Exception):
    def __init__(self, line: int, error: ManifestError) -> None:
        super().__init__(line)
        self.line = line
        self.error = error


_MAX_REPAIRS = 20
_KEY_VALUE = re.compile(r"^(\s*(?:-\s+)?[A-Za-z_][\w.-]*:\s+)([^\s\"'\[{|>&*!#%@`][^#]*)$")


def _load_stream(text: str) -> list[Any]:
    try:
        loader = _Loader(text)  # the reader vets characters already here
    except yaml.YAMLError as exc:
        raise ManifestError([Problem("manifest_encoding", "", str(exc))]) from None
    documents: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            problems = _check_nodes(node, len(documents))
            if problems:
                raise ManifestError(problems)
            try:
                documents.append(loader.construct_document(node))
            except (ValueError, OverflowError) as exc:  # e.g. an integer of 5,000 digits
                raise ManifestError(
                    [Problem("manifest_invalid_value", "", f"unreadable scalar: {exc}")]
                ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        error = ManifestError(
            [Problem("manifest_syntax", "", f"{exc.problem or exc}{where}", len(documents))]
        )
        if mark is not None and exc.problem == "mapping values are not allowed here":
            raise _Unquoted(mark.line, error) from None
        raise error from None
    except yaml.YAMLError as exc:
        raise ManifestError([Problem("manifest_syntax", "", str(exc), len(documents))]) from None
    finally:
        loader.dispose()
    return [d for d in documents if d is not None]
