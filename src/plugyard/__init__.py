"""plugyard: a plugin host for LLM applications.

One descriptor read from four manifest dialects (OLO, HomeClaw, MRP-VM, Shu), exported to
the tool formats LLM APIs take, registered in a persistent registry and called through
one executor. Everything public is named in ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plugyard.errors import (
        ERROR_CODES,
        ExportError,
        ManifestError,
        PlugyardError,
        Problem,
        UnsupportedTypeError,
    )
    from plugyard.execution.executor import CallRequest, Executor
    from plugyard.execution.result import Result
    from plugyard.execution.steps import StepBase, StepView
    from plugyard.manifest.exporters.dialect import to_dialect
    from plugyard.manifest.exporters.functions import export_tools, tool_names
    from plugyard.manifest.load import ManifestDocument, load_data, load_file, load_text
    from plugyard.manifest.model import (
        HttpRuntime,
        McpRuntime,
        NoRuntime,
        Operation,
        Placement,
        PluginDescriptor,
        PythonRuntime,
        SubprocessRuntime,
        descriptor_json_schema,
    )
    from plugyard.registry.model import RegisteredPlugin
    from plugyard.registry.registry import Registry
    from plugyard.runtimes.base import CallContext, ErrorInfo, Outcome, Progress
    from plugyard.runtimes.python import (
        InProcessRuntime,
        PluginDefinition,
        definition_of,
        inline,
        plugin,
        tool,
    )
    from plugyard.store.store import Store
    from plugyard.telemetry import Telemetry, TelemetrySettings
    from plugyard.types import Caller
    from plugyard.yard import Settings, Yard

__version__ = "0.1.0"

# Each public name is imported on first use (PEP 562): ``plugyard --version`` and every
# ``import plugyard.x`` run this file, and must not pay for the server, MCP and
# discovery stacks that the names below pull in.
_WHERE = {
    "CallContext": "plugyard.runtimes.base",
    "CallRequest": "plugyard.execution.executor",
    "Caller": "plugyard.types",
    "ERROR_CODES": "plugyard.errors",
    "ErrorInfo": "plugyard.runtimes.base",
    "Executor": "plugyard.execution.executor",
    "ExportError": "plugyard.errors",
    "HttpRuntime": "plugyard.manifest.model",
    "InProcessRuntime": "plugyard.runtimes.python",
    "ManifestDocument": "plugyard.manifest.load",
    "ManifestError": "plugyard.errors",
    "McpRuntime": "plugyard.manifest.model",
    "NoRuntime": "plugyard.manifest.model",
    "Operation": "plugyard.manifest.model",
    "Outcome": "plugyard.runtimes.base",
    "Placement": "plugyard.manifest.model",
    "PluginDefinition": "plugyard.runtimes.python",
    "PluginDescriptor": "plugyard.manifest.model",
    "PlugyardError": "plugyard.errors",
    "Problem": "plugyard.errors",
    "Progress": "plugyard.runtimes.base",
    "PythonRuntime": "plugyard.manifest.model",
    "RegisteredPlugin": "plugyard.registry.model",
    "Registry": "plugyard.registry.registry",
    "Result": "plugyard.execution.result",
    "Settings": "plugyard.yard",
    "Telemetry": "plugyard.telemetry",
    "TelemetrySettings": "plugyard.telemetry",
    "StepBase": "plugyard.execution.steps",
    "StepView": "plugyard.execution.steps",
    "Store": "plugyard.store.store",
    "SubprocessRuntime": "plugyard.manifest.model",
    "UnsupportedTypeError": "plugyard.errors",
    "Yard": "plugyard.yard",
    "definition_of": "plugyard.runtimes.python",
    "descriptor_json_schema": "plugyard.manifest.model",
    "export_tools": "plugyard.manifest.exporters.functions",
    "inline": "plugyard.runtimes.python",
    "load_data": "plugyard.manifest.load",
    "load_file": "plugyard.manifest.load",
    "load_text": "plugyard.manifest.load",
    "plugin": "plugyard.runtimes.python",
    "to_dialect": "plugyard.manifest.exporters.dialect",
    "tool": "plugyard.runtimes.python",
    "tool_names": "plugyard.manifest.exporters.functions",
}

__all__ = [
    "CallContext",
    "CallRequest",
    "Caller",
    "ERROR_CODES",
    "ErrorInfo",
    "Executor",
    "ExportError",
    "HttpRuntime",
    "InProcessRuntime",
    "ManifestDocument",
    "ManifestError",
    "McpRuntime",
    "NoRuntime",
    "Operation",
    "Outcome",
    "Placement",
    "PluginDefinition",
    "PluginDescriptor",
    "PlugyardError",
    "Problem",
    "Progress",
    "PythonRuntime",
    "RegisteredPlugin",
    "Registry",
    "Result",
    "Settings",
    "StepBase",
    "StepView",
    "Store",
    "SubprocessRuntime",
    "Telemetry",
    "TelemetrySettings",
    "UnsupportedTypeError",
    "Yard",
    "__version__",
    "definition_of",
    "descriptor_json_schema",
    "export_tools",
    "inline",
    "load_data",
    "load_file",
    "load_text",
    "plugin",
    "to_dialect",
    "tool",
    "tool_names",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'plugyard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain one
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
