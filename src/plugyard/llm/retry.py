"""When to try a model server again, and how long to wait first."""

from __future__ import annotations

import random
from dataclasses import dataclass

#: Worth another try: rate limited, or the server (or a proxy before it) failed.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter, so many callers refused at once do not
    come back at once; a server's ``Retry-After`` is honoured when it says more."""

    attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 8.0

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.cap_s, self.base_s * 2 ** (attempt - 1))
        wait = random.uniform(0, ceiling)
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, self.cap_s))
        return wait


def retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds; the HTTP-date form is rare from model servers and is
    left to the backoff."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
