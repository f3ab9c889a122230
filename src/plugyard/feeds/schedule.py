"""When a feed runs next: every N seconds, or by a cron expression (croniter, UTC)."""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import croniter  # type: ignore[import-untyped]

from plugyard.errors import GovernanceError

MIN_INTERVAL_S = 1.0


def check(interval_s: float | None, cron: str | None) -> None:
    """Exactly one of the two, and a valid one (``invalid_schedule``)."""
    if (interval_s is None) == (cron is None):
        raise GovernanceError("give an interval or a cron expression", code="invalid_schedule")
    if interval_s is not None and not interval_s >= MIN_INTERVAL_S:
        raise GovernanceError(
            f"an interval is at least {MIN_INTERVAL_S:g} s", code="invalid_schedule"
        )
    if cron is not None and not croniter.is_valid(cron):
        raise GovernanceError(f"not a cron expression: {cron!r}", code="invalid_schedule")


def next_run(interval_s: float | None, cron: str | None, after: float) -> float | None:
    """The first run time after ``after`` (epoch seconds); ``None`` for a one-shot job."""
    if interval_s is not None:
        return after + interval_s
    if cron is not None:
        start = datetime.fromtimestamp(after, UTC)
        return float(croniter(cron, start).get_next(float))
    return None


def first_run(interval_s: float | None, cron: str | None, now: float) -> float:
    """An interval feed runs at once; a cron feed at its next time."""
    if cron is not None:
        found = next_run(None, cron, now)
        assert found is not None
        return found
    return now
