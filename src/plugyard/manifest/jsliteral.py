"""Read a JavaScript object literal, as MRP-VM descriptors are written in ``index.mjs``
and in its documentation, into JSON data. Nothing is evaluated.

Documentation writes a field's type or its choices instead of a value
(``usesLLM: boolean``, ``costClass: "cheap" | "moderate"``); such a value is read as
the placeholder ``"..."``, which the caller reports and skips like any other.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<punct>[{}\[\]:,|;=])
  | (?P<ellipsis>\.\.\.)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\$]|\\.)*`)
  | (?P<number>-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))
  | (?P<ident>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_PLACEHOLDER = "..."
_LEADERS = ("export default", "module.exports =", "module.exports=")


class JsLiteralError(ValueError):
    """The text is not a JavaScript object literal plugyard can read."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise JsLiteralError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = match.lastgroup or ""
        if kind != "ws":
            out.append((kind, match.group()))
        pos = match.end()
    return out


def _unquote(raw: str) -> str:
    body = raw[1:-1]
    # Documentation wraps long strings over lines; JavaScript would not, so fold them.
    body = re.sub(r"\s*\n\s*", " ", body)
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], max_depth: int) -> None:
        self.tokens = tokens
        self.pos = 0
        self.max_depth = max_depth

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("eof", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token[0] == "eof" or (value is not None and token[1] != value):
            raise JsLiteralError(f"expected {value or 'a value'}, found {token[1] or 'end'!r}")
        self.pos += 1
        return token

    def value(self, depth: int) -> Any:
        first = self.primary(depth)
        if self.peek()[1] != "|":
            return first
        while self.peek()[1] == "|":
            self.take("|")
            self.primary(depth)
        return _PLACEHOLDER  # a union of choices documents a field; it is no value

    def primary(self, depth: int) -> Any:
        if depth > self.max_depth:
            raise JsLiteralError("nesting too deep")
        kind, text = self.peek()
        if text == "{":
            return self.obj(depth + 1)
        if text == "[":
            return self.arr(depth + 1)
        self.take()
        if kind == "string":
            return _unquote(text)
        if kind == "number":
            return _number(text)
        if kind == "ellipsis":
            return _PLACEHOLDER
        if kind == "ident":
            known = {"true": True, "false": False, "null": None, "undefined": None}
            return known.get(text, _PLACEHOLDER)
        raise JsLiteralError(f"unexpected {text!r}")

    def obj(self, depth: int) -> dict[str, Any]:
        self.take("{")
        out: dict[str, Any] = {}
        while self.peek()[1] != "}":
            kind, text = self.take()
            if kind == "ellipsis":
                out.setdefault(_PLACEHOLDER, None)
            else:
                if kind == "string":
                    key = _unquote(text)
                elif kind in {"ident", "number"}:
                    key = text
                else:
                    raise JsLiteralError(f"bad key {text!r}")
                self.take(":")
                if key in out:
                    raise JsLiteralError(f"duplicate key {key!r}")
                out[key] = self.value(depth)
            if self.peek()[1] != ",":
                break
            self.take(",")
        self.take("}")
        return out

    def arr(self, depth: int) -> list[Any]:
        self.take("[")
        out: list[Any] = []
        while self.peek()[1] != "]":
            out.append(self.value(depth))
            if self.peek()[1] != ",":
                break
            self.take(",")
        self.take("]")
        return out


def _number(text: str) -> int | float:
    if text.lower().lstrip("-").startswith("0x"):
        return int(text, 16)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text)


def parse_js_literal(text: str, *, max_depth: int = 64) -> Any:
    """Parse ``{...}`` (optionally after ``export default`` or ``module.exports =``)."""
    body = text.strip()
    for leader in _LEADERS:
        if body.startswith(leader):
            body = body[len(leader) :]
            break
    tokens = _tokens(body)
    while tokens and tokens[-1][1] == ";":
        tokens.pop()
    parser = _Parser(tokens, max_depth)
    result = parser.value(0)
    if parser.pos != len(tokens):
        raise JsLiteralError(f"unexpected {tokens[parser.pos][1]!r} after the object")
    return result
