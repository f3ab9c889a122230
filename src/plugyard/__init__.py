"""plugyard: a plugin host for LLM applications.

One descriptor read from four manifest dialects (OLO, HomeClaw, MRP-VM, Shu), exported to
the tool formats LLM APIs take. Everything public is named in ``__all__``.
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

__version__ = "0.1.0"

__all__ = [
    "ERROR_CODES",
    "ExportError",
    "HttpRuntime",
    "ManifestDocument",
    "ManifestError",
    "McpRuntime",
    "NoRuntime",
    "Operation",
    "Placement",
    "PluginDescriptor",
    "PlugyardError",
    "Problem",
    "PythonRuntime",
    "SubprocessRuntime",
    "UnsupportedTypeError",
    "__version__",
    "descriptor_json_schema",
    "export_tools",
    "load_data",
    "load_file",
    "load_text",
    "to_dialect",
    "tool_names",
]
