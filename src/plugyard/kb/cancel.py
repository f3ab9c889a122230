"""A caller's way to stop knowledge-base work it started (a call whose deadline passed).

The work registers how it can be stopped (kill a worker process); the caller's
:meth:`Cancel.cancel` runs those stops once. :meth:`Cancel.commit` is the point of no
return before a write: a cancelled ingestion never reaches its write, and a write that
has begun is no longer cancelled.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from plugyard.kb.errors import KnowledgeError


class Cancel:
    """A caller's way to stop work it started: :meth:`cancel` runs the registered
    stops once. :meth:`commit` is the point of no return — after it, cancelling is too
    late and says so — so that what a cancelled call would have written never lands."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stops: list[Callable[[], None]] = []
        self.cancelled = False
        self.committed = False

    def cancel(self) -> bool:
        with self._lock:
            if self.committed or self.cancelled:
                return self.cancelled
            self.cancelled = True
            stops, self._stops = self._stops, []
        for stop in stops:
            stop()
        return True

    def check(self) -> None:
        if self.cancelled:
            raise KnowledgeError("the ingestion was cancelled", code="cancelled")

    def commit(self) -> None:
        """Past this, the write goes ahead; ``cancelled`` if it is too late for that."""
        with self._lock:
            self.check()
            self.committed = True

    @contextlib.contextmanager
    def stopping(self, stop: Callable[[], None]) -> Iterator[None]:
        """Run ``stop`` if the caller cancels while the block runs."""
        with self._lock:
            cancelled = self.cancelled
            if not cancelled:
                self._stops.append(stop)
        if cancelled:
            stop()
        try:
            yield
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._stops.remove(stop)
