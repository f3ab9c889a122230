"""Parts of a yard built on first use.

A command that lists plugins needs the store and the registry; it must not import the
MCP SDK, aiohttp, the crypto of the audit log or the embedding model to do so. The yard
keeps such parts behind :class:`part` (an attribute built once, under its own lock)
and :class:`DeferredRuntime` (a runtime built when a plugin of its kind is first checked
or called). Its parts live in the collaborators it composes (:mod:`plugyard.yard`);
:class:`forward` lets the yard answer for them under their own names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from plugyard.manifest.model import Operation
from plugyard.runtimes.base import Answer, CallContext, Runtime, Target

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


class part(Generic[T]):  # lower case: read as a decorator, like cached_property
    """Like ``functools.cached_property``, but built at most once even when threads race
    for it (two audit chains appending to one log must never exist). Each part has its
    own lock, so a slow one (the embedding model) holds up no other."""

    def __init__(self, build: Callable[[Any], T]) -> None:
        self.build = build
        self.__doc__ = build.__doc__
        self.name = build.__name__
        # Shared by every yard; re-entrant, so that building one yard's part may build
        # the same part of another yard in the same thread.
        self._lock = threading.RLock()

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, owner: None, cls: type) -> part[T]: ...

    @overload
    def __get__(self, owner: object, cls: type | None = None) -> T: ...

    def __get__(self, owner: object | None, cls: type | None = None) -> T | part[T]:
        if owner is None:
            return self
        found: T
        with self._lock:
            if self.name not in vars(owner):
                vars(owner)[self.name] = self.build(owner)
            found = vars(owner)[self.name]
        return found


class forward(Generic[T]):  # lower case: read like part
    """An attribute of ``owner.<holder>`` — a part or a method — read on ``owner`` under
    the same name, typed as the holder's: a class that composes collaborators keeps
    the one interface its callers know without restating each signature."""

    @overload
    def __init__(self: forward[T], holder: str, attribute: part[T]) -> None: ...

    @overload
    def __init__(
        self: forward[Callable[P, R]], holder: str, attribute: Callable[Concatenate[Any, P], R]
    ) -> None: ...

    def __init__(self, holder: str, attribute: Any) -> None:
        self.holder = holder
        self.name: str = attribute.name if isinstance(attribute, part) else attribute.__name__
        self.__doc__ = attribute.__doc__

    @overload
    def __get__(self, owner: None, cls: type) -> forward[T]: ...

    @overload
    def __get__(self, owner: object, cls: type | None = None) -> T: ...

    def __get__(self, owner: object | None, cls: type | None = None) -> T | forward[T]:
        if owner is None:
            return self
        found: T = getattr(getattr(owner, self.holder), self.name)
        return found


def built(owner: object, name: str) -> Any:
    """The part ``name`` of ``owner`` if it was built, else ``None`` (a part that
    ``owner`` forwards is asked of the collaborator that holds it)."""
    found = vars(owner).get(name)
    if found is None:
        via = getattr(type(owner), name, None)
        if isinstance(via, forward):
            return built(getattr(owner, via.holder), via.name)
    return found


class DeferredRuntime:
    """A runtime that is built the first time it is asked to check or run anything."""

    def __init__(self, kind: str, build: Callable[[], Runtime]) -> None:
        self.kind = kind
        self._build = build
        self._lock = threading.Lock()
        self.built: Runtime | None = None

    def get(self) -> Runtime:
        with self._lock:
            if self.built is None:
                self.built = self._build()
            return self.built

    def check(self, target: Target) -> str | None:
        return self.get().check(target)

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        return await self.get().invoke(target, operation, params, context, host)

    def __getattr__(self, name: str) -> Any:
        # Optional runtime methods (describe, runs_inline, forget …) are asked for with
        # getattr(runtime, name, None): answer as the real runtime does.
        if name.startswith("_") or name == "built":
            raise AttributeError(name)
        return getattr(self.get(), name)


def real(runtime: Runtime) -> Runtime:
    """The runtime itself, built if it was deferred."""
    return runtime.get() if isinstance(runtime, DeferredRuntime) else runtime


class Runtimes(Mapping[str, Runtime]):
    """A yard's runtimes by kind. Looking one up builds it (callers get the runtime
    itself); :attr:`lazy` holds the same runtimes for the executor and the start-up
    checks, each built only when a plugin of its kind is first checked or called."""

    def __init__(self, runtimes: Mapping[str, Runtime]) -> None:
        self.lazy: dict[str, Runtime] = dict(runtimes)

    def __getitem__(self, kind: str) -> Runtime:
        return real(self.lazy[kind])

    def __iter__(self) -> Iterator[str]:
        return iter(self.lazy)

    def __len__(self) -> int:
        return len(self.lazy)

    def built(self) -> list[Runtime]:
        """The runtimes built so far (what there is to stop)."""
        found = []
        for runtime in self.lazy.values():
            if isinstance(runtime, DeferredRuntime):
                if runtime.built is None:
                    continue
                runtime = runtime.built
            found.append(runtime)
        return found
