"""Doubles for the executor's collaborators: a plugin table and a function runtime."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from plugyard.manifest.model import Operation, PluginDescriptor, PythonRuntime
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Target


class Table:
    def __init__(self) -> None:
        self.plugins: dict[str, RegisteredPlugin] = {}

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        return self.plugins.get(plugin_id)

    def ids(self) -> tuple[str, ...]:
        return tuple(self.plugins)

    def add(self, descriptor: PluginDescriptor, **kw: Any) -> RegisteredPlugin:
        plugin = RegisteredPlugin.of(descriptor, "code")
        if kw:
            from dataclasses import replace

            plugin = replace(plugin, **kw)
        self.plugins[plugin.id] = plugin
        return plugin


class FunctionRuntime:
    """Runs ``functions[(plugin_id, operation_id)](**params)``; what it returns is data,
    an Outcome, or an async iterator (streaming)."""

    kind = "python"

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], Callable[..., Any]] = {}

    def check(self, target: Target) -> str | None:
        del target
        return None

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        del context, host
        fn = self.functions[(target.descriptor.id, operation.id)]
        try:
            value = fn(**params)
            if hasattr(value, "__aiter__"):
                return value  # type: ignore[no-any-return]
            if hasattr(value, "__await__"):
                value = await value
        except Exception as exc:  # the plugin failing is data
            return Outcome(status="error", error=ErrorInfo("plugin_error", str(exc)))
        return value if isinstance(value, Outcome) else Outcome(data=value)


def descriptor(pid: str, *ops: Operation, **kw: Any) -> PluginDescriptor:
    return PluginDescriptor(
        id=pid, name=pid, operations=ops, runtime=PythonRuntime(entrypoint="x:y"), **kw
    )


@pytest.fixture
def table() -> Table:
    return Table()


@pytest.fixture
def runtime() -> FunctionRuntime:
    return FunctionRuntime()
