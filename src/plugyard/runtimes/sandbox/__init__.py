"""Bubblewrap sandboxes for untrusted code (see :mod:`.bwrap` and docs/subprocess.md).

Other runtimes build on these names: :func:`unavailable_reason` (``None`` when sandboxes
work here), :class:`SandboxLimits` and :func:`sandboxed` (the argv to run instead), and
:func:`confine` (a cgroup and a uid of its own for one sandbox; :func:`mechanism` says
which of them this host offers).
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
from plugyard.runtimes.sandbox.confine import Confinement, confine, mechanism

__all__ = [
    "PLUGIN_DIR",
    "SANDBOX_UID",
    "Confinement",
    "SandboxLimits",
    "confine",
    "inside",
    "mechanism",
    "python_path",
    "sandboxed",
    "unavailable_reason",
]
