"""Calling a handler: arguments, the thread-or-inline decision, streams, failures.

Streaming convention (an async generator, or code that returns an async iterator):

- a :class:`Progress` it yields is a progress event, passed on at once;
- an :class:`Outcome` it yields is the result, and ends the stream;
- any other value is held back: when another value follows, the held one is passed on as
  progress (a string as its message, a ``{message, data, percent}`` mapping as those
  fields, anything else as its data); the **last** value yielded is the result, coerced
  like a return value. A stream that yields nothing but progress has ``None`` as data.

A plugin that raises — before, during or after streaming — answers ``plugin_error``
(see :mod:`.coerce`); cancellation is never swallowed.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pydantic import ValidationError

from plugyard.runtimes.base import Answer, CallContext, Outcome, Progress
from plugyard.runtimes.python.coerce import crashed, failure, to_outcome, to_progress
from plugyard.runtimes.python.handler import Handler
from plugyard.runtimes.python.shuhost import ShuHost, speaks_shu

_NOTHING: Any = object()
#: Read once per function: its module's source does not change while it is loaded.
_speaks_shu = functools.cache(speaks_shu)


class BadParameters(Exception):
    """The parameters do not fit the code's signature."""


def arguments(
    handler: Handler,
    params: dict[str, Any],
    context: CallContext,
    host: Any,
    config: Mapping[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional and keyword arguments of one call."""
    if handler.style == "execute" and host is not None and _speaks_shu(handler.func):
        host = ShuHost(host)  # Shu's execute() is written against Shu's host
    if handler.style != "keywords":
        return (params, context.as_plugin_context(), host)[: handler.positional], {}
    if handler.accepts is not None and not params.keys() <= handler.accepts:
        unknown = sorted(params.keys() - handler.accepts)
        raise BadParameters(f"unknown parameter(s) {', '.join(map(repr, unknown))}")
    if not handler.required <= params.keys():
        missing = sorted(handler.required - params.keys())
        raise BadParameters(f"missing parameter(s) {', '.join(map(repr, missing))}")
    if not handler.converters and not handler.injected:
        return (), params
    kwargs = dict(params)
    for name, convert in handler.converters.items():
        if name in kwargs:
            try:
                kwargs[name] = convert(kwargs[name])
            except ValidationError as exc:
                raise BadParameters(f"{name}: {exc.errors()[0]['msg']}") from None
    if "context" in handler.injected:
        kwargs["context"] = context.as_plugin_context()
    if "host" in handler.injected:
        kwargs["host"] = host
    if "config" in handler.injected:
        kwargs["config"] = dict(config)
    return (), kwargs


async def run(
    handler: Handler, args: tuple[Any, ...], kwargs: dict[str, Any], debug: bool
) -> Answer:
    """Call the code and answer its outcome, or its stream."""
    if handler.mode == "stream":
        try:
            source = handler.func(*args, **kwargs)
        except (Exception, SystemExit) as exc:
            return crashed(exc, debug=debug)
        return stream(source, handler, debug)
    try:
        if handler.mode == "inline":
            value = handler.func(*args, **kwargs)
        elif handler.mode == "async":
            value = await handler.func(*args, **kwargs)
        else:
            value = await asyncio.to_thread(handler.func, *args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
    except (Exception, SystemExit) as exc:
        return crashed(exc, debug=debug)
    if hasattr(value, "__aiter__") and not isinstance(value, Outcome):
        return stream(value, handler, debug)
    return result(handler, value)


def result(handler: Handler, value: Any) -> Outcome:
    if handler.serialize is not None and not isinstance(value, Outcome):
        try:
            value = handler.serialize(value)
        except (ValueError, TypeError) as exc:
            return failure("invalid_output", f"the result cannot be serialised: {exc}")
    return to_outcome(value, family=handler.family)


async def stream(source: Any, handler: Handler, debug: bool) -> AsyncIterator[Progress | Outcome]:
    iterator = source.__aiter__()
    held = _NOTHING
    try:
        while True:
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except (Exception, SystemExit) as exc:
                if held is not _NOTHING:
                    yield to_progress(held)  # not the last value after all
                yield crashed(exc, debug=debug)
                return
            if isinstance(item, Outcome):
                yield item
                return
            if isinstance(item, Progress):
                yield item
                continue
            if held is not _NOTHING:
                yield to_progress(held)
            held = item
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
    yield result(handler, None if held is _NOTHING else held)
