"""``host`` as Shu's plugins call it: the same gated host, spoken in Shu's conventions.

A plugin whose code is Shu's ``execute(params, context, host)`` is written against Shu's
host, where most services are coroutines (``await host.secrets.get(k)``, ``await
host.cache.set(k, v, ttl_seconds=60)``, ``await host.storage.get(k)``…) and a few are
plain (``host.identity.get_current_user_identity()``, ``host.log.info(...)``). plugyard's
own services are plain methods (the in-process host, and a sandboxed worker's proxy over
the pipe alike). :class:`ShuHost` wraps whichever host the plugin was lent:

- every attribute is asked of the wrapped host, so its gate (``capability_not_granted``
  for an undeclared capability) and the fixed set of methods a worker is served are
  unchanged — nothing more is reachable through this object;
- the methods of Shu's coroutine services answer an awaitable; a method that is a
  coroutine already is passed through, so ``await`` works on both;
- Shu's "safe" variants (``set_safe``, ``delete_safe``) answer ``True``/``False``
  instead of raising, as Shu's do.

The keyword spellings (``ttl_seconds``, ``namespace``, ``fetch(method, url)``) are
accepted by plugyard's services themselves, so plain callers may use them too.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Generator
from typing import Any

#: Shu's host services whose methods are coroutines.
ASYNC_SERVICES = frozenset(
    {"secrets", "storage", "cache", "cursor", "http", "kb", "query", "ocr", "auth", "utils"}
)
#: Shu's "safe" methods: the plain method they stand for.
_SAFE = {"set_safe": "set", "delete_safe": "delete"}


class ShuHost:
    """The host in Shu's spelling (see the module docstring)."""

    __slots__ = ("_host",)

    def __init__(self, host: Any) -> None:
        self._host = host

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        service = getattr(self._host, name)  # the gate answers first
        if name in ASYNC_SERVICES:
            return _AsyncService(service)
        return service


class _AsyncService:
    __slots__ = ("_service",)

    def __init__(self, service: Any) -> None:
        self._service = service

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _SAFE:
            return _safe(getattr(self._service, _SAFE[name]))
        method = getattr(self._service, name)
        if not callable(method) or inspect.iscoroutinefunction(method):
            return method
        return _awaitable(method)


def _awaitable(method: Callable[..., Any]) -> Callable[..., Any]:
    # The method runs at once, not when awaited: a write whose awaitable is dropped
    # still happens, as it does for plain callers.
    def call(*args: Any, **kwargs: Any) -> Any:
        value = method(*args, **kwargs)
        return value if inspect.isawaitable(value) else _Done(value)

    return call


class _Done:
    """A value already computed, awaitable as Shu's coroutine methods are."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self._value
        yield  # a generator that returns at once


#: ``await host.<service>.`` (or ``await h.storage.`` …) in a plugin's module: code
#: written against Shu's coroutine host.
_AWAITS_HOST = re.compile(
    r"\bawait\s+[\w.]*\b(?:" + "|".join(sorted(ASYNC_SERVICES)) + r")\.\w+\s*\("
)


def speaks_shu(func: Callable[..., Any]) -> bool:
    """Whether ``func``'s module awaits Shu's host services; plugyard's own class-style
    plugins call them plainly and keep the plain host."""
    module = inspect.getmodule(func)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return False
    return _AWAITS_HOST.search(source) is not None


def _safe(method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> bool:
        try:
            value = method(*args, **kwargs)
            if inspect.isawaitable(value):
                await value
        except Exception:  # Shu's safe variants report, never raise
            return False
        return True

    return call
