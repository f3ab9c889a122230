"""The runtimes of a yard, by kind, and what the yard asks of all of them.

Only the in-process runtime exists from the start; the HTTP, MCP and subprocess
runtimes are built when a plugin of their kind is first checked or called
(:mod:`plugyard.deferred`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from plugyard.deferred import DeferredRuntime, Runtimes
from plugyard.manifest.model import Operation
from plugyard.registry.registry import Registry
from plugyard.runtimes.base import Runtime
from plugyard.runtimes.python.runtime import InProcessRuntime
from plugyard.store.store import Store
from plugyard.yard.network import Network
from plugyard.yard.settings import Settings

if TYPE_CHECKING:
    from plugyard.runtimes.mcp import McpPluginRuntime


def runtimes_for(
    settings: Settings, store: Store, registry: Registry, network: Network
) -> Runtimes:
    """Every runtime a yard has, the remote ones deferred."""

    def http() -> Runtime:
        from plugyard.runtimes.http import HttpPluginRuntime

        return HttpPluginRuntime(network.outbound)

    def mcp() -> Runtime:
        from plugyard.runtimes.mcp import McpPluginRuntime
        from plugyard.store.mcp_pins import SqlPinRepository

        runtime = McpPluginRuntime(SqlPinRepository(store), network.outbound.guard)
        runtime.tools_changed = _tools_changed(registry)
        return runtime

    def subprocess() -> Runtime:
        from plugyard.runtimes.subprocess import SubprocessPluginRuntime, SubprocessSettings

        return SubprocessPluginRuntime(SubprocessSettings(allow=settings.subprocess_allow))

    return Runtimes({
        # In-process plugins are the hot path: no indirection on their calls.
        "python": InProcessRuntime(),
        "http": DeferredRuntime("http", http),
        "mcp": DeferredRuntime("mcp", mcp),
        "subprocess": DeferredRuntime("subprocess", subprocess),
    })  # fmt: skip


def _tools_changed(registry: Registry) -> Callable[[str, tuple[Operation, ...]], None]:
    def tools_changed(plugin_id: str, operations: tuple[Operation, ...]) -> None:
        """An MCP server added or dropped tools while connected: register the plugin
        again with them, so listings, search and calls see the new list at once."""
        held = registry.find(plugin_id)
        if held is None or held.descriptor.operations == operations:
            return
        refined = held.descriptor.model_copy(update={"operations": operations})
        registry.register(held.redescribed(refined), replace=True)

    return tools_changed


def mcp_runtime(runtimes: Runtimes) -> McpPluginRuntime:
    """The MCP runtime itself (built if it was not)."""
    from plugyard.runtimes.mcp import McpPluginRuntime

    runtime = runtimes["mcp"]
    assert isinstance(runtime, McpPluginRuntime)
    return runtime


def forget(runtimes: Runtimes, plugin_id: str) -> None:
    """Every runtime lets go of ``plugin_id``: its workers stop, its code is dropped."""
    for runtime in runtimes.values():
        release = getattr(runtime, "forget", None)
        if release is not None:
            release(plugin_id)


def kill_all(runtimes: Runtimes) -> None:
    """Subprocess workers (their trees) die with the yard; a runtime never built has
    none."""
    for runtime in runtimes.built():
        stop = getattr(runtime, "kill_all", None)
        if stop is not None:
            stop()
