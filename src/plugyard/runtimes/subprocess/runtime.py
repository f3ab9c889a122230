"""The ``subprocess`` runtime: wrappers speaking protocol v1 (docs/subprocess.md).

``check`` resolves a plugin's command once per (id, content hash, folder, trust) — path,
allowlist, sandbox — and asks the wrapper to ``describe`` itself; what it finds, or why
the plugin cannot run (prefixed with an error code), is cached. A describe that failed
without a verdict on the plugin (it crashed, timed out, could not start) is cached only
for a while (:mod:`.retry`): the plugin stays registered, its calls answer
``plugin_unavailable`` until a later call describes it again. ``invoke`` sends one
``execute`` to a worker of the plugin's pool (persistent) or to a fresh process (one-shot)
and turns the reply into an :class:`Outcome`; a streaming operation answers with its
progress first. An idempotent operation whose persistent worker was lost before it gave
anything back is sent once more, to another worker; nothing else ever runs twice.
A DS016 wrapper and an MRP-VM plugin in plugyard's Node host are run by the same
resolution and sandbox (:mod:`.conventions`). Untrusted plugins run only in a sandbox;
where there is none they are refused with ``sandbox_unavailable``, never run bare.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import weakref
from collections.abc import AsyncIterator
from typing import Any

from plugyard.errors import ERROR_CODES
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Progress, Target
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import protocol
from plugyard.runtimes.subprocess.conventions import (
    ContextHost,
    invoke_ds016,
    is_ds016,
    is_node_host,
)
from plugyard.runtimes.subprocess.describe import (
    DESCRIBE_TIMEOUT_S,
    DescribeError,
    check_description,
    describe,
)
from plugyard.runtimes.subprocess.failures import WorkerFailure, protocol_failure
from plugyard.runtimes.subprocess.pool import Pool
from plugyard.runtimes.subprocess.retry import Refusal, describe_failed
from plugyard.runtimes.subprocess.spec import (
    SpecError,
    SubprocessSettings,
    WrapperSpec,
    is_pyworker,
    needs_sandbox,
    resolve,
)
from plugyard.runtimes.subprocess.worker import Worker

_Key = tuple[str, str, str | None, str]
# Every runtime's workers die with the interpreter (weakly held: runtimes come and go).
_LIVE: weakref.WeakSet[SubprocessPluginRuntime] = weakref.WeakSet()
log = logging.getLogger("plugyard.runtimes.subprocess")


class SubprocessPluginRuntime:
    """Runs operations of ``subprocess`` plugins (the ``Runtime`` protocol)."""

    kind = "subprocess"

    def __init__(self, settings: SubprocessSettings | None = None, *, describe: bool = True):
        self.settings = settings or SubprocessSettings()
        self._describe = describe
        self._entries: dict[_Key, WrapperSpec | Refusal] = {}
        self._pools: dict[_Key, Pool] = {}
        #: What plugyard's Python worker said of its code (Shu's Python contract).
        self._described: dict[_Key, PluginDescriptor] = {}
        # A descriptor without a content hash is keyed by its identity: keep it alive.
        self._anchors: dict[_Key, object] = {}
        self._lock = threading.RLock()
        _LIVE.add(self)

    def check(self, target: Target) -> str | None:
        found = self._entry(target, describe=self._describe)
        if isinstance(found, Refusal) and found.passing:
            log.warning("plugin %s: %s; a later call tries again", target.descriptor.id, found)
            return None
        return str(found) if isinstance(found, Refusal) else None

    def describe(self, target: Target) -> PluginDescriptor | None:
        """The descriptor refined from the code by plugyard's Python worker (its schemas,
        permissions and actions), on the runtime and settings of ``target``; ``None``
        when the worker adds nothing (or this is another wrapper)."""
        if not is_pyworker(target.descriptor):
            return None
        self._entry(target, describe=self._describe)
        found = self._described.get(_key(target))
        if found is None:
            return None
        refined = target.descriptor.model_copy(
            update={
                "operations": found.operations,
                "permissions": target.descriptor.permissions or found.permissions,
            }
        )
        return None if refined == target.descriptor else refined

    def forget(self, plugin_id: str) -> None:
        """Drop what is cached for ``plugin_id`` and stop its workers at once (its package
        was removed or upgraded); safe from any thread."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == plugin_id]:
                del self._entries[key]
                self._anchors.pop(key, None)
                self._described.pop(key, None)
            for key in [k for k in self._pools if k[0] == plugin_id]:
                self._pools.pop(key).stop()

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        key = _key(target)
        spec = self._entries.get(key) or self._entry(target, describe=False)
        if isinstance(spec, Refusal) and spec.due:
            spec = await asyncio.to_thread(self._describe_again, target, spec)
        if isinstance(spec, Refusal):
            return _failure(*spec.answer())
        if is_ds016(target.descriptor):
            return await invoke_ds016(spec, self.settings, params)
        if is_node_host(target.descriptor):
            host = ContextHost(host, context)
        request = {
            "operation": operation.id,
            "parameters": params,
            "context": context.as_plugin_context(wire=True),
        }
        # Sent again only when running it twice is declared harmless (effect "read" is the
        # default, so no promise), and only to a persistent worker lost under it.
        again = operation.idempotent and spec.mode == "persistent"
        if operation.streaming:
            return self._stream(key, spec, request, host, again)
        final: Outcome | None = None
        async for item in self._exchange(key, spec, request, host, again):
            if isinstance(item, Outcome):
                final = item
        return final or _failure("plugin_error", "the wrapper gave no result")

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            with contextlib.suppress(RuntimeError):
                await pool.close()

    def kill_all(self) -> None:
        """Kill every worker now (also run at interpreter exit)."""
        for pool in list(self._pools.values()):
            pool.kill()

    # ---------------------------------------------------------------------------- internals

    async def _stream(
        self, key: _Key, spec: WrapperSpec, request: dict[str, Any], host: Any, again: bool
    ) -> AsyncIterator[Progress | Outcome]:
        async for item in self._exchange(key, spec, request, host, again):
            yield item

    async def _exchange(
        self, key: _Key, spec: WrapperSpec, request: dict[str, Any], host: Any, again: bool
    ) -> AsyncIterator[Progress | Outcome]:
        try:
            async with asyncio.timeout(spec.timeout_s):
                for attempt in (1, 2):
                    started = False
                    try:
                        async for item in self._once(key, spec, request, host):
                            started = True
                            yield item
                        return
                    except WorkerFailure as exc:
                        if exc.code != "worker_lost" or not again or started or attempt == 2:
                            raise
        except TimeoutError:
            yield Outcome(
                status="timeout",
                error=ErrorInfo("timeout", f"no reply within {spec.timeout_s} s"),
            )
        except WorkerFailure as exc:
            status = "timeout" if exc.code == "timeout" else "error"
            yield Outcome(status=status, error=ErrorInfo(exc.code, exc.message, exc.details))

    async def _once(
        self, key: _Key, spec: WrapperSpec, request: dict[str, Any], host: Any
    ) -> AsyncIterator[Progress | Outcome]:
        if spec.mode == "persistent":
            worker = await self._pool(key, spec).acquire()
        else:
            worker = Worker(spec, self.settings)
            await worker.start()
        try:
            async for item in worker.exchange("execute", request, host):
                yield item if isinstance(item, Progress) else _outcome(worker, item)
        finally:
            if spec.mode == "oneshot":
                worker.kill()  # the tree dies now, whatever happens to this task
                await worker.close()  # and its pipes close on this loop

    def _pool(self, key: _Key, spec: WrapperSpec) -> Pool:
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = Pool(spec, self.settings)
        return pool

    def _entry(self, target: Target, *, describe: bool) -> WrapperSpec | Refusal:
        key = _key(target)
        with self._lock:
            found = self._entries.get(key)
            if found is None or (describe and isinstance(found, Refusal) and found.due):
                found = self._resolve(target, describe, found)
                self._entries[key] = found
                if not target.content_hash:
                    self._anchors[key] = target.descriptor
            return found

    def _describe_again(self, target: Target, previous: Refusal) -> WrapperSpec | Refusal:
        """One more describe after ``previous`` failed (one at a time: the others keep
        the refusal meanwhile), outside the lock — it runs a process."""
        key = _key(target)
        with self._lock:
            if self._entries.get(key) is not previous:
                return self._entries.get(key) or previous
            self._entries[key] = previous.claimed()
        found = self._resolve(target, True, previous)
        with self._lock:
            if key in self._entries:  # not forgotten meanwhile
                self._entries[key] = found
        return found

    def _resolve(
        self, target: Target, run_describe: bool, previous: WrapperSpec | Refusal | None = None
    ) -> WrapperSpec | Refusal:
        if needs_sandbox(target):
            reason = unavailable_reason()
            if reason is not None:
                return Refusal("sandbox_unavailable", f"untrusted code needs a sandbox: {reason}")
        try:
            spec = resolve(target, self.settings)
        except SpecError as exc:
            return Refusal("plugin_unavailable", str(exc))
        if not run_describe or is_ds016(target.descriptor):
            return spec  # a DS016 wrapper reads its input until EOF: it has no describe
        try:
            timeout = min(spec.timeout_s or DESCRIBE_TIMEOUT_S, DESCRIBE_TIMEOUT_S)
            found = describe(spec, self.settings, timeout)
            if found is not None:
                pyworker = is_pyworker(target.descriptor)
                said = check_description(found, target.descriptor, code_refines=pyworker)
                if pyworker:
                    self._described[_key(target)] = said
        except DescribeError as exc:
            last = previous if isinstance(previous, Refusal) else None
            return describe_failed(exc.code, f"describe: {exc.message}", last)
        return spec


@atexit.register
def _kill_everything() -> None:
    for runtime in list(_LIVE):
        runtime.kill_all()


def _outcome(worker: Worker, reply: protocol.Reply) -> Outcome:
    if reply.error is not None:
        code = reply.error.code if reply.error.code in ERROR_CODES else "plugin_error"
        details = dict(reply.error.details)
        if code != reply.error.code:
            details["wrapper_code"] = reply.error.code
        return Outcome(status="error", error=ErrorInfo(code, reply.error.message, details))
    try:
        return protocol.outcome(reply.result)
    except protocol.ProtocolError as exc:
        worker.kill(protocol_failure(str(exc)))
        return _failure("wrapper_protocol_error", str(exc))


def _failure(code: str, message: str) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message))


def _key(target: Target) -> _Key:
    digest = target.content_hash or f"@{id(target.descriptor)}"
    return (target.descriptor.id, digest, target.location, target.trust)
