"""One operation's code, analysed once at load so that a call only looks things up.

Three calling styles:

- ``keywords`` (HomeClaw functions, decorated functions): parameters as keyword
  arguments; a parameter named ``context``, ``host`` or ``config`` receives the call
  context mapping, the host object or the plugin's ``config`` instead.
- ``execute`` (Shu): ``execute(params, context, host)``, trimmed to what it accepts.
- ``family`` (MRP-VM): ``method(input, ctx)`` (and ``host`` third, if it takes one).

And four modes: ``async`` (awaited), ``stream`` (an async generator), ``inline`` (a sync
function marked known-short, called on the event loop) and ``thread`` (any other sync
function, run in a worker thread so it never blocks the loop).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.runtimes.python.names import INJECTED

Style = Literal["keywords", "execute", "family"]
Mode = Literal["async", "stream", "inline", "thread"]
#: The attribute that marks a sync callable as known-short (see :func:`inline`).
INLINE_ATTRIBUTE = "__plugyard_inline__"
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class SignatureError(Exception):
    """The code cannot be called the way its style needs."""


@dataclass(frozen=True, slots=True)
class Handler:
    func: Callable[..., Any]
    style: Style
    mode: Mode
    #: keywords: the parameter names it takes (``None``: any, it has ``**kwargs``)
    accepts: frozenset[str] | None = None
    required: frozenset[str] = frozenset()
    injected: frozenset[str] = frozenset()
    #: execute / family: how many of ``(params, context, host)`` it takes
    positional: int = 0
    #: decorated code: parameter name → conversion to its annotated type
    converters: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    #: decorated code: the return value → JSON data
    serialize: Callable[[Any], Any] | None = None

    @property
    def family(self) -> bool:
        return self.style == "family"


def inline(func: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a sync function as known-short: it runs on the event loop, without the
    70–100 µs of a worker-thread hop. Only for code that never blocks."""
    setattr(func, INLINE_ATTRIBUTE, True)
    return func


def mode_of(func: Callable[..., Any], *, inline_hint: bool = False) -> Mode:
    if inspect.isasyncgenfunction(func):
        return "stream"
    if inspect.iscoroutinefunction(func):
        return "async"
    if inline_hint or getattr(func, INLINE_ATTRIBUTE, False) is True:
        return "inline"
    return "thread"


def analyse(
    func: Callable[..., Any],
    style: Style,
    *,
    inline_hint: bool = False,
    converters: Mapping[str, Callable[[Any], Any]] | None = None,
    serialize: Callable[[Any], Any] | None = None,
) -> Handler:
    """The handler for ``func`` called in ``style``; :class:`SignatureError` if it cannot be."""
    mode = mode_of(func, inline_hint=inline_hint)
    converted = dict(converters or {})
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # some builtins have no signature: pass everything
        count = 0 if style == "keywords" else 3
        return Handler(
            func, style, mode, positional=count, converters=converted, serialize=serialize
        )
    if style != "keywords":
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
            count = 3
        else:
            count = min(3, sum(p.kind in _POSITIONAL for p in parameters))
        return Handler(
            func, style, mode, positional=count, converters=converted, serialize=serialize
        )
    accepts: set[str] | None = set()
    required: set[str] = set()
    injected: set[str] = set()
    for p in parameters:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            accepts = None
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        elif p.kind is inspect.Parameter.POSITIONAL_ONLY:
            if p.default is inspect.Parameter.empty:
                raise SignatureError(f"parameter {p.name!r} of {_name(func)} is positional-only")
        elif p.name in INJECTED:
            injected.add(p.name)
        else:
            if accepts is not None:
                accepts.add(p.name)
            if p.default is inspect.Parameter.empty:
                required.add(p.name)
    return Handler(
        func,
        style,
        mode,
        accepts=frozenset(accepts) if accepts is not None else None,
        required=frozenset(required),
        injected=frozenset(injected),
        converters=converted,
        serialize=serialize,
    )


def first_parameter(func: Callable[..., Any]) -> str | None:
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    return parameters[0].name if parameters else None


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__qualname__", None) or repr(func)
