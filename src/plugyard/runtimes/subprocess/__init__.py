"""The ``subprocess`` runtime: wrappers speaking newline-delimited JSON (docs/subprocess.md)."""

from plugyard.runtimes.subprocess.runtime import SubprocessPluginRuntime
from plugyard.runtimes.subprocess.spec import SubprocessSettings, pyworker_argv

__all__ = ["SubprocessPluginRuntime", "SubprocessSettings", "pyworker_argv"]
