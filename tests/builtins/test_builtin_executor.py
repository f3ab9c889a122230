"""The bundled plugins run through the one call path: executor → in-process runtime."""

from __future__ import annotations

import asyncio
from typing import Any

from bundled_plugins import bundled

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import Target
from plugyard.runtimes.python import InProcessRuntime


class Bundled:
    """A plugin table of the bundled plugins, each refined from its code as the registry
    is meant to do it (runtime.describe)."""

    def __init__(self, runtime: InProcessRuntime) -> None:
        self.plugins: dict[str, RegisteredPlugin] = {}
        for plugin_id, (descriptor, path) in bundled().items():
            location = str(path.parent)
            refined = runtime.describe(Target(descriptor, location)) or descriptor
            self.plugins[plugin_id] = RegisteredPlugin.of(refined, "builtin", location=location)

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        return self.plugins.get(plugin_id)


def _call(plugin: str, op: str, params: dict[str, Any]) -> Result:
    runtime = InProcessRuntime()
    executor = Executor(Bundled(runtime), {"python": runtime})
    return asyncio.run(executor.call(CallRequest(plugin, op, params)))


def test_a_shu_plugin_runs_through_the_executor() -> None:
    result = _call("calculator", "execute", {"expression": "6 * 7"})
    assert (result.status, result.data["result"]) == ("success", 42)


def test_the_executor_validates_against_the_schema_the_code_declares() -> None:
    result = _call("calculator", "execute", {"expression": 42})
    assert result.error is not None and result.error.code == "invalid_parameters"


def test_a_family_status_reaches_the_envelope() -> None:
    result = _call("val-grounded", "validate", {"prompt": "q", "answer": ""})
    assert result.status == "rejected"


def test_a_plugin_error_code_reaches_the_envelope() -> None:
    result = _call("unit-convert", "convert", {"value": 1, "from_unit": "kg", "to_unit": "m"})
    assert result.error is not None and result.error.code == "invalid_parameters"
