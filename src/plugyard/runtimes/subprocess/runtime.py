"""The ``subprocess`` runtime: wrappers speaking protocol v1 (docs/subprocess.md).

``check`` resolves a plugin's command once per (id, content hash, folder, trust) — path,
allowlist, sandbox — and asks the wrapper to ``describe`` itself; what it finds, or why
the plugin cannot run (prefixed with an error code), is cached. ``invoke`` sends one
``execute`` to a worker of the plugin's pool (persistent) or to a fresh process (one-shot)
and turns the reply into an :class:`Outcome`; a streaming operation answers with its
progress first. Untrusted plugins run only in a sandbox; where there is none they are
refused with ``sandbox_unavailable``, never run bare.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from plugyard.errors import ERROR_CODES
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Progress, Target
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import protocol
from plugyard.runtimes.subprocess.describe import (
    DESCRIBE_TIMEOUT_S,
    DescribeError,
    check_description,
    describe,
)
from plugyard.runtimes.subprocess.pool import Pool
from plugyard.runtimes.subprocess.spec import (
    SpecError,
    SubprocessSettings,
    WrapperSpec,
    needs_sandbox,
    resolve,
)
from plugyard.runtimes.subprocess.worker import Worker, WorkerFailure

_Key = tuple[str, str, str | None, str]
# Every runtime's workers die with the interpreter (weakly held: runtimes come and go).
_LIVE: weakref.WeakSet[SubprocessPluginRuntime] = weakref.WeakSet()


@dataclass(frozen=True)
class _Refusal:
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SubprocessPluginRuntime:
    """Runs operations of ``subprocess`` plugins (the ``Runtime`` protocol)."""

    kind = "subprocess"

    def __init__(self, settings: SubprocessSettings | None = None, *, describe: bool = True):
        self.settings = settings or SubprocessSettings()
        self._describe = describe
        self._entries: dict[_Key, WrapperSpec | _Refusal] = {}
        self._pools: dict[_Key, Pool] = {}
        # A descriptor without a content hash is keyed by its identity: keep it alive.
        self._anchors: dict[_Key, object] = {}
        self._lock = threading.RLock()
        _LIVE.add(self)

    def check(self, target: Target) -> str | None:
        found = self._entry(target, describe=self._describe)
        return str(found) if isinstance(found, _Refusal) else None

    def forget(self, plugin_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == plugin_id]:
                del self._entries[key]
                self._anchors.pop(key, None)
                pool = self._pools.pop(key, None)
                if pool is not None:
                    pool.kill()

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
        if isinstance(spec, _Refusal):
            return _failure(spec.code, spec.message)
        request = {
            "operation": operation.id,
            "parameters": params,
            "context": context.as_plugin_context(),
        }
        if operation.streaming:
            return self._stream(key, spec, request, host)
        final: Outcome | None = None
        async for item in self._exchange(key, spec, request, host):
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
        self, key: _Key, spec: WrapperSpec, request: dict[str, Any], host: Any
    ) -> AsyncIterator[Progress | Outcome]:
        async for item in self._exchange(key, spec, request, host):
            yield item

    async def _exchange(
        self, key: _Key, spec: WrapperSpec, request: dict[str, Any], host: Any
    ) -> AsyncIterator[Progress | Outcome]:
        try:
            async with asyncio.timeout(spec.timeout_s):
                if spec.mode == "persistent":
                    worker = await self._pool(key, spec).acquire()
                else:
                    worker = Worker(spec, self.settings.limits)
                    await worker.start()
                try:
                    async for item in worker.exchange("execute", request, host):
                        if isinstance(item, Progress):
                            yield item
                        else:
                            yield _outcome(worker, item)
                finally:
                    if spec.mode == "oneshot":
                        worker.kill()  # the tree dies now, whatever happens to this task
                        await worker.close()  # and its pipes close on this loop
        except TimeoutError:
            yield Outcome(
                status="timeout",
                error=ErrorInfo("timeout", f"no reply within {spec.timeout_s} s"),
            )
        except WorkerFailure as exc:
            status = "timeout" if exc.code == "timeout" else "error"
            yield Outcome(status=status, error=ErrorInfo(exc.code, exc.message, exc.details))

    def _pool(self, key: _Key, spec: WrapperSpec) -> Pool:
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = Pool(spec, self.settings.limits)
        return pool

    def _entry(self, target: Target, *, describe: bool) -> WrapperSpec | _Refusal:
        key = _key(target)
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                found = self._resolve(target, describe)
                self._entries[key] = found
                if not target.content_hash:
                    self._anchors[key] = target.descriptor
            return found

    def _resolve(self, target: Target, run_describe: bool) -> WrapperSpec | _Refusal:
        if needs_sandbox(target):
            reason = unavailable_reason()
            if reason is not None:
                return _Refusal("sandbox_unavailable", f"untrusted code needs a sandbox: {reason}")
        try:
            spec = resolve(target, self.settings)
        except SpecError as exc:
            return _Refusal("plugin_unavailable", str(exc))
        if not run_describe:
            return spec
        try:
            timeout = min(spec.timeout_s or DESCRIBE_TIMEOUT_S, DESCRIBE_TIMEOUT_S)
            found = describe(spec, self.settings.limits, timeout)
            if found is not None:
                check_description(found, target.descriptor)
        except DescribeError as exc:
            return _Refusal(exc.code, f"describe: {exc.message}")
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
        worker.kill()
        return _failure("wrapper_protocol_error", str(exc))


def _failure(code: str, message: str) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message))


def _key(target: Target) -> _Key:
    digest = target.content_hash or f"@{id(target.descriptor)}"
    return (target.descriptor.id, digest, target.location, target.trust)
