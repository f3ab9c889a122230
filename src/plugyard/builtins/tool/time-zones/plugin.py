"""Time-zone conversion with :mod:`zoneinfo` (HomeClaw style: one function per capability).
The ``tzdata`` package is a dependency, so the IANA database is there even on systems
without ``/usr/share/zoneinfo``."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta
from datetime import time as dt_time
from functools import cache

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

_ALIASES = {"utc": "UTC", "z": "UTC", "gmt": "UTC", "zulu": "UTC"}


class InvalidInput(ValueError):
    code = "invalid_parameters"


class ZonedTime(TypedDict):
    time: str
    zone: str
    utc_offset: str
    abbreviation: str
    dst: bool
    utc: str
    weekday: str
    note: str | None


class ZoneList(TypedDict):
    zones: list[str]
    total: int


@cache
def _zones() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def lookup(name: str) -> zoneinfo.ZoneInfo:
    key = name.strip()
    canonical = _ALIASES.get(key.lower()) or _zones().get(key.lower().replace(" ", "_"))
    if canonical is None:
        raise InvalidInput(f"unknown time zone {name!r}; list_zones finds zone names")
    return zoneinfo.ZoneInfo(canonical)


def convert_time(time: str, to_zone: str, from_zone: str | None = None) -> ZonedTime:
    source = lookup(from_zone or "UTC")
    target = lookup(to_zone)
    moment, note = _parse(time, source)
    return _describe(moment.astimezone(target), note)


def now(zone: str = "UTC") -> ZonedTime:
    return _describe(datetime.now(UTC).astimezone(lookup(zone)), None)


def list_zones(contains: str | None = None, limit: int = 50) -> ZoneList:
    needle = (contains or "").strip().lower().replace(" ", "_")
    found = sorted(name for key, name in _zones().items() if needle in key)
    return {"zones": found[: max(0, min(limit, 1000))], "total": len(found)}


# short and never blocking: called on the event loop, no thread hop
convert_time.__plugyard_inline__ = True  # type: ignore[attr-defined]
now.__plugyard_inline__ = True  # type: ignore[attr-defined]
list_zones.__plugyard_inline__ = True  # type: ignore[attr-defined]


def _parse(text: str, source: zoneinfo.ZoneInfo) -> tuple[datetime, str | None]:
    value = text.strip()
    if value.lower() == "now":
        return datetime.now(UTC), None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        clock = _time_of_day(value)
        if clock is None:
            raise InvalidInput(f"{text!r} is not an ISO 8601 date and time") from None
        today = datetime.now(clock.tzinfo or source).date()
        moment = datetime.combine(today, clock)
    if moment.tzinfo is not None:
        return moment, None
    local = moment.replace(tzinfo=source)
    return local, _anomaly(local, source)


def _time_of_day(value: str) -> dt_time | None:
    """A time of day for today: "9:30", "14:30", "14:30:15", with an offset of its own
    ("14:30Z", "14:30+02:00") or without."""
    try:
        return dt_time.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        pass
    try:
        return datetime.strptime(value, "%H:%M").time() if len(value) <= 5 else None
    except ValueError:
        return None


def _anomaly(local: datetime, source: zoneinfo.ZoneInfo) -> str | None:
    """Whether a wall-clock time is skipped or repeated by a daylight-saving change."""
    round_trip = local.astimezone(UTC).astimezone(source)
    if round_trip.replace(tzinfo=None) != local.replace(tzinfo=None):
        return "that time does not exist in the source zone (clocks skip it); read as shifted"
    if local.replace(fold=1).utcoffset() != local.utcoffset():
        return "that time occurs twice in the source zone; the first one is used"
    return None


def _describe(moment: datetime, note: str | None) -> ZonedTime:
    offset = moment.utcoffset() or timedelta(0)
    dst = moment.dst()
    return {
        "time": moment.isoformat(),
        "zone": str(moment.tzinfo),
        "utc_offset": _offset(offset),
        "abbreviation": moment.tzname() or "",
        "dst": bool(dst),
        "utc": moment.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "weekday": moment.strftime("%A"),
        "note": note,
    }


def _offset(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{rest:02d}"
