"""The in-process runtime: trusted Python plugins, called in this process.

``check`` loads a plugin's code once per (plugin id, content hash, folder, trust) and caches
the result, a binding of operations to handlers or the reason it cannot run; ``invoke``
is then a dictionary lookup and the call. A sync plugin runs in a worker thread unless it
is marked inline; an async generator streams. Code declared in Python rather than in a
folder (a :class:`PluginDefinition`, a decorated function, any object) is handed over
with :meth:`InProcessRuntime.provide`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from plugyard.manifest.model import Operation, PluginDescriptor, PythonRuntime
from plugyard.runtimes.base import Answer, CallContext, Target
from plugyard.runtimes.python.binding import BindError, Binding, bind
from plugyard.runtimes.python.calling import BadParameters, arguments, run
from plugyard.runtimes.python.coerce import failure
from plugyard.runtimes.python.decorator import definition_of
from plugyard.runtimes.python.describe import refine
from plugyard.runtimes.python.homeclaw_core import HOMECLAW_PACKAGES, core_needs
from plugyard.runtimes.python.loader import LoadError, load, private_prefix, purge

_Key = tuple[str, str, str | None, str]


class InProcessRuntime:
    """Runs the operations of ``python`` plugins (the ``Runtime`` protocol)."""

    kind = "python"

    def __init__(self) -> None:
        self._bindings: dict[_Key, Binding | str] = {}
        self._provided: dict[str, Any] = {}
        self._prefixes: dict[str, set[str]] = {}
        # A descriptor without a content hash is keyed by its identity: keep it alive.
        self._anchors: dict[_Key, PluginDescriptor] = {}
        self._lock = threading.RLock()

    def provide(self, code: Any, plugin_id: str | None = None) -> str:
        """Use ``code`` for ``plugin_id`` (by default the id its definition declares),
        whatever the descriptor says about an entrypoint or folder. Answers the id."""
        definition = definition_of(code)
        found = plugin_id or (definition.id if definition is not None else None)
        if found is None:
            raise ValueError("name the plugin id this code is for")
        with self._lock:
            self.forget(found)
            self._provided[found] = code
        return found

    def forget(self, plugin_id: str) -> None:
        """Drop the cached code of one plugin; the next check or call loads it again."""
        with self._lock:
            for key in [k for k in self._bindings if k[0] == plugin_id]:
                del self._bindings[key]
                self._anchors.pop(key, None)
            for prefix in self._prefixes.pop(plugin_id, set()):
                purge(prefix)

    def check(self, target: Target) -> str | None:
        found = self._binding(target)
        return found if isinstance(found, str) else None

    def describe(self, target: Target) -> PluginDescriptor | None:
        """The descriptor refined from the code (see :mod:`.describe`), or ``None`` when
        the code adds nothing or cannot load."""
        found = self._binding(target)
        if isinstance(found, str):
            return None
        try:
            return refine(target.descriptor, found)
        except Exception:
            return None

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        found = self._bindings.get(_key(target)) or self._binding(target)
        if isinstance(found, str):
            return failure("plugin_unavailable", found)
        handler = found.handlers.get(operation.id)
        if handler is None:
            return failure("operation_not_found", f"no operation {operation.id!r} in the code")
        try:
            args, kwargs = arguments(handler, params, context, host, target.descriptor.config)
        except BadParameters as exc:
            return failure("invalid_parameters", str(exc))
        return await run(handler, args, kwargs, context.debug)

    def runs_inline(self, target: Target, operation: Operation) -> bool:
        """Whether ``invoke`` completes without ever yielding to the event loop: known-short
        sync code marked inline. A timer could not interrupt such a call anyway, so the
        executor checks its deadline after it instead of arming one."""
        found = self._bindings.get(_key(target))
        if found is None or isinstance(found, str):
            return False
        handler = found.handlers.get(operation.id)
        return handler is not None and handler.mode == "inline"

    # ---------------------------------------------------------------------------- loading

    def _binding(self, target: Target) -> Binding | str:
        key = _key(target)
        with self._lock:
            found = self._bindings.get(key)
            if found is None:
                found = self._load(target)
                self._bindings[key] = found
                if not target.content_hash:
                    self._anchors[key] = target.descriptor
            return found

    def _load(self, target: Target) -> Binding | str:
        descriptor = target.descriptor
        runtime = descriptor.runtime
        if not isinstance(runtime, PythonRuntime):
            return f"not an in-process plugin (runtime {runtime.kind!r})"
        if target.trust != "trusted":
            return "untrusted code never runs in-process"
        try:
            root = self._provided.get(descriptor.id)
            if root is None:
                folder = _folder(target.location)
                if folder is not None:
                    prefix = private_prefix(descriptor.id, target.content_hash, folder)
                    self._prefixes.setdefault(descriptor.id, set()).add(prefix)
                root = load(runtime.entrypoint, descriptor.id, folder, target.content_hash)
            return bind(root, descriptor)
        except (LoadError, BindError) as exc:
            return str(exc)
        except ModuleNotFoundError as exc:
            needs = _homeclaw_core(exc, target)
            return needs or f"cannot load the plugin's code: {type(exc).__name__}: {exc}"
        except (Exception, SystemExit) as exc:  # the plugin's own code failed to import
            return f"cannot load the plugin's code: {type(exc).__name__}: {exc}"


def _homeclaw_core(exc: ModuleNotFoundError, target: Target) -> str | None:
    """A HomeClaw built-in that misses HomeClaw's own modules: what it needs of them."""
    if (exc.name or "").split(".")[0] not in HOMECLAW_PACKAGES:
        return None
    try:
        folder = _folder(target.location)
    except LoadError:
        return None
    if folder is None:
        return None
    for source in sorted(folder.glob("*.py")):
        needs = core_needs(source)
        if needs is not None:
            return f"{needs} ({source.name})"
    return None


def _key(target: Target) -> _Key:
    digest = target.content_hash or f"@{id(target.descriptor)}"
    return (target.descriptor.id, digest, target.location, target.trust)


def _folder(location: str | None) -> Path | None:
    if location is None:
        return None
    path = Path(location)
    if path.is_file():
        return path.parent  # a manifest's path: its code sits beside it
    if not path.is_dir():
        raise LoadError(f"the plugin folder {location} does not exist")
    return path
