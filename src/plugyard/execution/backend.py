"""Where calls run: in this process (``local``) or as Ray tasks on a cluster (``ray``).

A backend takes a :class:`CallRequest` whose context the caller already vouched for and
answers the call's one result envelope. The local backend is the executor itself; the
Ray backend (:mod:`.ray_backend`) ships the request to a worker that runs it through an
executor of its own, built on the same store, so policy, validation, governance and
audit hold there exactly as here. Pipelines choose a backend for their ASYNC branches
and iterations, feeds for their runs, and the executor for operations marked ``heavy``.

The setting (``PLUGYARD_EXECUTION``) is one string:

- ``local`` — the default: asyncio in this process;
- ``ray:local`` — a Ray instance started in this process (tests, one machine);
- ``ray://host:port`` — a Ray cluster, through its client server (``ray start --head``
  listens on 10001).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest
from plugyard.execution.result import Result

LOCAL = "local"
RAY_LOCAL = "ray:local"


class Caller(Protocol):
    async def call(self, request: CallRequest) -> Result: ...


class ExecutionBackend(Protocol):
    """Runs one call somewhere and answers its result envelope; never raises for a
    failure of the call or of the backend (those are results with an error code)."""

    @property
    def name(self) -> str: ...

    async def call(self, request: CallRequest) -> Result: ...

    def close(self) -> None: ...


class LocalBackend:
    """Today's path: the executor on this process's event loop."""

    name = LOCAL

    def __init__(self, executor: Caller) -> None:
        self._executor = executor

    async def call(self, request: CallRequest) -> Result:
        return await self._executor.call(request)

    def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """A parsed ``PLUGYARD_EXECUTION``: ``kind`` ``local`` or ``ray``; ``address`` is
    ``local`` or ``host:port`` for Ray."""

    kind: str
    address: str = ""

    @property
    def remote(self) -> bool:
        return self.kind != LOCAL

    @classmethod
    def parse(cls, text: str | None) -> BackendSpec:
        value = (text or LOCAL).strip()
        if value == LOCAL:
            return cls(LOCAL)
        if value == RAY_LOCAL:
            return cls("ray", "local")
        if value.startswith("ray://"):
            host, sep, port = value.removeprefix("ray://").rstrip("/").rpartition(":")
            if sep and host and port.isdigit() and 0 < int(port) < 65536:
                return cls("ray", f"{host.strip('[]')}:{port}")
        raise PlugyardError(
            f"execution backend {value!r} is not local, ray:local or ray://host:port",
            code="execution_backend_unavailable",
        )
