"""How a failure travels up the tree of a run (internal to the engine)."""

from __future__ import annotations


class Stopped(Exception):
    """A failure its policy says must stop: the run, or a group whose ``on_error`` is
    ``skip``. ``info`` is the run's error: code, message and the node's path."""

    def __init__(self, code: str, message: str, path: str) -> None:
        super().__init__(message)
        self.info = {"code": code, "message": message, "path": path}


class Skipped(Exception):
    """A failed call whose policy is ``skip``; a failed control plugin skips its group."""


class DeadlineExceeded(Exception):
    """The run's deadline passed between two calls (inline code never yields to a timer)."""
