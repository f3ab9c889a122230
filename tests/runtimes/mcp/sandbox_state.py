from __future__ import annotations

import importlib
from typing import Any


def sandbox_reason() -> str | None:
    """Why the sandbox cannot run here (``None`` when it can)."""
    try:
        sandbox: Any = importlib.import_module("plugyard.runtimes.sandbox")
    except ImportError:
        return "no sandbox module"
    reason = sandbox.unavailable_reason()
    return None if reason is None else str(reason)
