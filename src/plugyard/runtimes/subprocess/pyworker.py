"""plugyard's Python worker: serves one Python plugin folder over wrapper protocol v1.

Run as ``python -I -S -m plugyard.runtimes.subprocess.pyworker <folder> [plugin-id [site]]`` (the
subprocess runtime starts it with plugyard's own paths added, inside the sandbox for
untrusted code). It loads the folder's manifest and code with the in-process runtime's
loader — every code style that runtime supports — and answers ``describe`` and
``execute``, and ``cancel`` for code that can stop (async functions and streams; a
sync function cannot be interrupted, so its cancel is left unanswered and the host kills
the worker after its grace). Whenever no request runs, it reaps its exited children.
``<folder>/vendor`` goes on ``sys.path`` with ``sys.path.insert`` (so its ``.pth`` files
are never run). The plugin's ``host`` is a proxy: each call of an allowed method becomes
a host call on the pipe, answered by the host's gated host object.

Threads: one reads stdin and hands requests to the event loop and host replies to
whoever waits for them; the loop runs the plugin's code. A sync host method called on the
loop thread therefore blocks only that thread, never the reader, and cannot deadlock.
The real stdout is kept for the protocol; fd 1 becomes stderr, so a plugin's ``print``
cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec

from plugyard.runtimes.subprocess.hostcalls import ASYNC_METHODS, METHODS, bytes_out

PROTOCOL_VERSION = 1
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
#: The context members CallContext has fields for; the rest are a flow's ``extra``.
_CONTEXT_KEYS = frozenset(
    ("request_id", "subject", "roles", "user_context", "idempotency_key", "debug", "budgets",
     "session")
)  # fmt: skip


class HostError(Exception):
    """A host call the host refused; ``code`` is its error code."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = details or {}


class Channel:
    """The protocol stream: locked writes, and host calls waiting for their replies."""

    def __init__(self, out: Any) -> None:
        self._out, self._lock = out, threading.Lock()
        self._waiting: dict[str, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)

    def send(self, message: dict[str, Any]) -> None:
        try:
            line = _encode(message)
        except (TypeError, ValueError) as exc:
            fallback = {"code": "invalid_output", "message": f"not JSON: {exc}"}
            line = _encode({"id": message.get("id"), "error": fallback})
        with self._lock:
            self._out.write(line + b"\n")
            self._out.flush()

    def host_call(
        self, request: int, capability: str, method: str, args: Any, kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        ident = f"h{next(self._ids)}"
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._waiting[ident] = future
        params = {"capability": capability, "call": method, "args": bytes_out(list(args))}
        self.send({"id": ident, "method": "host", "params": {**params, "kwargs": bytes_out(kwargs),
                                                              "request": request}})  # fmt: skip
        return future

    def answered(self, message: dict[str, Any]) -> None:
        future = self._waiting.pop(str(message.get("id")), None)
        if future is None:
            return
        error = message.get("error")
        if isinstance(error, dict):
            details = error.get("details")
            future.set_exception(
                HostError(
                    str(error.get("code")),
                    str(error.get("message")),
                    details if isinstance(details, dict) else None,
                )
            )
        else:
            future.set_result(message.get("result"))


class HostProxy:
    """``host`` inside the worker: only the capabilities and methods the host serves."""

    def __init__(self, channel: Channel, request: int) -> None:
        self._channel, self._request = channel, request

    def __getattr__(self, capability: str) -> Any:
        if capability.startswith("_") or capability not in METHODS:
            raise HostError("capability_unavailable", f"no host capability {capability!r}")
        return _CapabilityProxy(self._channel, self._request, capability)


class _CapabilityProxy:
    def __init__(self, channel: Channel, request: int, capability: str) -> None:
        self._channel, self._request, self._name = channel, request, capability

    def __getattr__(self, method: str) -> Any:
        if method not in METHODS[self._name]:
            raise AttributeError(f"host.{self._name} has no {method!r} for workers")
        channel, request, name = self._channel, self._request, self._name

        if (name, method) in ASYNC_METHODS:

            async def call_async(*args: Any, **kwargs: Any) -> Any:
                future = channel.host_call(request, name, method, args, kwargs)
                return await asyncio.wrap_future(future)

            return call_async

        def call(*args: Any, **kwargs: Any) -> Any:
            return channel.host_call(request, name, method, args, kwargs).result()

        return call


def load_plugin(folder: Path, plugin_id: str | None) -> tuple[Any, Any]:
    """The descriptor and the binding of the plugin in ``folder``."""
    from plugyard.manifest.load import MANIFEST_NAMES, load_file
    from plugyard.manifest.model import PythonRuntime
    from plugyard.runtimes.python.binding import bind
    from plugyard.runtimes.python.loader import load

    descriptors: list[Any] = []
    for name in sorted(MANIFEST_NAMES):
        if (folder / name).is_file():
            descriptors.extend(load_file(folder / name).plugins)
    chosen = [d for d in descriptors if plugin_id in (None, d.id)]
    if not chosen:
        raise SystemExit(f"pyworker: no plugin {plugin_id or ''} in {folder}")
    descriptor = chosen[0]
    runtime = descriptor.runtime
    entrypoint = runtime.entrypoint if isinstance(runtime, PythonRuntime) else None
    binding = bind(load(entrypoint, descriptor.id, folder, "worker"), descriptor)
    # The code's own contract (Shu: get_schema, get_output_schema, requires_permission,
    # list_actions), as the in-process runtime reads it: describe answers it, and the
    # host enforces it exactly as for an in-process plugin.
    from plugyard.runtimes.python.describe import refine

    try:
        refined = refine(descriptor, binding)
    except Exception:
        refined = None
    if refined is not None:
        descriptor, binding = refined, bind(binding.owner, refined)
    return descriptor, binding


def outcome_data(outcome: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"status": outcome.status, "data": outcome.data}
    if outcome.error is not None:
        out["error"] = outcome.error.to_dict()
    if outcome.cost:
        out["cost"] = dict(outcome.cost)
    if outcome.next_cursor is not None:
        out["next_cursor"] = outcome.next_cursor
    for name in ("citations", "skips", "diagnostics"):
        value = getattr(outcome, name)
        if value:
            out[name] = [dict(v) if isinstance(v, dict) else v for v in value]
    return out


class Server:
    def __init__(self, channel: Channel, descriptor: Any, binding: Any) -> None:
        self.channel, self.descriptor, self.binding = channel, descriptor, binding
        self._stoppable: dict[Any, asyncio.Task[Any]] = {}  # request id -> its running task
        # Ids read but not yet answered (added by the reader thread), and those of them
        # cancelled before their code started: a cancel can overtake its request's task.
        self.received: set[Any] = set()
        self._cancelled: set[Any] = set()

    def cancel(self, ident: Any) -> None:
        task = self._stoppable.get(ident)
        if task is not None:
            task.cancel()
        elif ident in self.received:
            self._cancelled.add(ident)

    async def handle(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        try:
            if message.get("method") == "describe":
                from plugyard.manifest.dialects.canonical import SCHEMA_ID

                described = {"$schema": SCHEMA_ID, **self.descriptor.to_data()}
                self.channel.send({"id": ident, "result": described})
            elif message.get("method") == "execute":
                await self._execute(ident, message.get("params") or {})
            else:
                error = {"code": "invalid_request", "message": "unknown method"}
                self.channel.send({"id": ident, "error": error})
        except asyncio.CancelledError:
            error = {"code": "cancelled", "message": "the request was cancelled"}
            self.channel.send({"id": ident, "error": error})
        except Exception as exc:  # a bug here must still answer the request
            error = {"code": "plugin_error", "message": f"{type(exc).__name__}: {exc}"}
            self.channel.send({"id": ident, "error": error})
        finally:
            self._stoppable.pop(ident, None)
            self._cancelled.discard(ident)
            self.received.discard(ident)
            if not self.received:
                _collect_children()

    async def _execute(self, ident: Any, params: dict[str, Any]) -> None:
        from plugyard.runtimes.base import CallContext, Outcome, Progress
        from plugyard.runtimes.python.calling import BadParameters, arguments, run

        handler = self.binding.handlers.get(params.get("operation"))
        if handler is None:
            error = {"code": "operation_not_found", "message": "no such operation in the code"}
            self.channel.send({"id": ident, "error": error})
            return
        raw = params.get("context") or {}
        context = CallContext(
            request_id=str(raw.get("request_id", "")),
            subject=raw.get("subject"),
            roles=tuple(raw.get("roles") or ()),
            user_context=raw.get("user_context") or {},
            idempotency_key=raw.get("idempotency_key"),
            debug=bool(raw.get("debug")),
            budgets=raw.get("budgets") or {},
            session=raw.get("session") or {},
            extra={k: v for k, v in raw.items() if k not in _CONTEXT_KEYS},
        )
        host = HostProxy(self.channel, ident)
        try:
            args, kwargs = arguments(
                handler, params.get("parameters") or {}, context, host, self.descriptor.config
            )
        except BadParameters as exc:
            self.channel.send(
                {"id": ident, "error": {"code": "invalid_parameters", "message": str(exc)}}
            )
            return
        if ident in self._cancelled:  # cancelled before it started: it never runs
            raise asyncio.CancelledError
        task = asyncio.current_task()
        if handler.mode in ("async", "stream") and task is not None:
            self._stoppable[ident] = task
        answer = await run(handler, args, kwargs, context.debug)
        if isinstance(answer, Outcome):
            self.channel.send({"id": ident, "result": outcome_data(answer)})
            return
        async for item in answer:
            if isinstance(item, Progress):
                progress = item.to_dict()
                progress.pop("type", None)
                self.channel.send({"id": ident, "progress": progress})
            else:
                self.channel.send({"id": ident, "result": outcome_data(item)})


def _collect_children() -> None:
    """Reap the worker's exited children while no request runs (no plugin code waits for
    one then): each zombie would hold a slot of the sandbox's process budget, and the host
    retires a worker that keeps them."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _reader(loop: asyncio.AbstractEventLoop, server: Server, stdin: Any) -> None:
    for line in stdin:
        try:
            message = _decode(line)
        except msgspec.DecodeError:
            continue
        if not isinstance(message, dict):
            continue
        if message.get("method") in ("describe", "execute"):
            server.received.add(message.get("id"))
            asyncio.run_coroutine_threadsafe(server.handle(message), loop)
        elif message.get("method") == "cancel":
            params = message.get("params")
            if isinstance(params, dict):
                loop.call_soon_threadsafe(server.cancel, params.get("id"))
        else:
            server.channel.answered(message)
    loop.call_soon_threadsafe(loop.stop)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: pyworker <plugin-folder> [plugin-id [venv-site-packages]]")
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # print() in plugin code goes to stderr, not into the protocol
    folder = Path(argv[0]).resolve()
    if len(argv) > 2:  # the plugin's own venv: its packages before plugyard's
        # plugyard's own modules are imported first, so they stay plugyard's.
        import plugyard.manifest.load
        import plugyard.runtimes.python.binding
        import plugyard.runtimes.python.describe

        sys.path.insert(0, str(Path(argv[2]).resolve()))
    vendor = folder / "vendor"
    if vendor.is_dir():
        sys.path.insert(0, str(vendor))
    try:  # the import guard, when this plugyard has one: an early warning, not the boundary
        from plugyard.runtimes.python import guard

        guard.install(str(folder))
    except (ImportError, AttributeError):
        pass
    descriptor, binding = load_plugin(folder, argv[1] if len(argv) > 1 else None)
    # Imported now, not on the first call: they take a second or more cold, and that
    # second would block the loop while a request (or its cancel) waits.
    import plugyard.runtimes.python.calling  # noqa: F401

    loop = asyncio.new_event_loop()
    server = Server(Channel(protocol_out), descriptor, binding)
    threading.Thread(target=_reader, args=(loop, server, sys.stdin.buffer), daemon=True).start()
    loop.run_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
