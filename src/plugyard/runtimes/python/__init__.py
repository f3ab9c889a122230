"""The in-process Python runtime, and the decorator that declares plugins in code.

Three styles of plugin code run here: functions named after operations (HomeClaw), a
class with ``execute(params, context, host)`` (Shu) and the typed family methods
(MRP-VM). See ``docs/writing-plugins.md``.
"""

from plugyard.runtimes.python.decorator import (
    PluginDefinition,
    definition_of,
    plugin,
    tool,
)
from plugyard.runtimes.python.handler import inline
from plugyard.runtimes.python.runtime import InProcessRuntime

__all__ = ["InProcessRuntime", "PluginDefinition", "definition_of", "inline", "plugin", "tool"]
