"""plugyard: a plugin host for LLM applications.

One descriptor read from four manifest dialects (OLO, HomeClaw, MRP-VM, Shu), exported to
the tool formats LLM APIs take, registered in a persistent registry and called through
one executor. Everything public is named in ``__all__``.
"""

from __future__ import annotations

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
from plugyard.yard import Settings, Yard

__version__ = "0.1.0"

__all__ = [
    "CallContext",
    "CallRequest",
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
    "Store",
    "SubprocessRuntime",
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
