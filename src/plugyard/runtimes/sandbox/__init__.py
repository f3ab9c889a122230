"""Bubblewrap sandboxes for untrusted code (see :mod:`.bwrap` and docs/subprocess.md).

Other runtimes build on three names: :func:`unavailable_reason` (``None`` when sandboxes
work here), :class:`SandboxLimits` and :func:`sandboxed` (the argv to run instead).
"""

from plugyard.runtimes.sandbox.bwrap import (
    PLUGIN_DIR,
    SANDBOX_UID,
    SandboxLimits,
    inside,
    python_path,
    sandboxed,
    unavailable_reason,
)

__all__ = [
    "PLUGIN_DIR",
    "SANDBOX_UID",
    "SandboxLimits",
    "inside",
    "python_path",
    "sandboxed",
    "unavailable_reason",
]
