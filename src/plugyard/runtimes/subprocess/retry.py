"""Why a plugin cannot run, and which of those reasons are tried again.

A refusal with a verdict on the plugin — its command is not allowed, its wrapper lies in
``describe``, there is no sandbox here — stands until the plugin changes. A ``describe``
that failed without one (the wrapper crashed, timed out or could not start: the machine
may have been short of processes or memory) is tried again by a later call, after a
backoff that doubles from :data:`DESCRIBE_RETRY_S` up to :data:`DESCRIBE_RETRY_MAX_S`, so a
plugin recovers on its own once the cause is gone and a broken one costs a spawn a
minute at most.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

DESCRIBE_RETRY_S = 1.0
DESCRIBE_RETRY_MAX_S = 60.0
# Codes of a describe that says nothing about the plugin itself.
_NO_VERDICT = frozenset({"plugin_error", "plugin_unavailable", "timeout", "worker_lost"})


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str
    retry_at: float | None = None  # monotonic; None: it stands
    failures: int = 0

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    @property
    def passing(self) -> bool:
        """Whether a later attempt may succeed (the plugin stays registered meanwhile)."""
        return self.retry_at is not None

    @property
    def due(self) -> bool:
        return self.retry_at is not None and time.monotonic() >= self.retry_at

    def answer(self) -> tuple[str, str]:
        """The code and message a call gets while this refusal holds."""
        if self.retry_at is None:
            return self.code, self.message
        left = max(0.0, self.retry_at - time.monotonic())
        return "plugin_unavailable", (
            f"{self} (failed {self.failures} time(s); tried again in {left:.1f} s or later)"
        )

    def claimed(self) -> Refusal:
        """This refusal with its next attempt pushed back, while one attempt runs."""
        return replace(self, retry_at=time.monotonic() + _backoff(self.failures + 1))


def describe_failed(code: str, message: str, previous: Refusal | None) -> Refusal:
    """The refusal for a failed describe, after ``previous`` (the last one, if any)."""
    if code not in _NO_VERDICT:
        return Refusal(code, message)
    failures = previous.failures + 1 if previous is not None and previous.passing else 1
    return Refusal(code, message, time.monotonic() + _backoff(failures), failures)


def _backoff(failures: int) -> float:
    return float(min(DESCRIBE_RETRY_S * 2 ** min(failures - 1, 16), DESCRIBE_RETRY_MAX_S))
