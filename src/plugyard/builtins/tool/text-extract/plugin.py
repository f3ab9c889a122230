"""Extraction of e-mails, URLs, numbers and dates with regular expressions (HomeClaw
style). Each finding is listed once, in order of appearance; digits that belong to an
e-mail, a URL or a date are not also reported as numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Literal

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

Kind = Literal["emails", "urls", "numbers", "dates"]
KINDS: tuple[Kind, ...] = ("emails", "urls", "numbers", "dates")
MAX_CHARACTERS = 1_000_000
MAX_ITEMS = 1_000

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
_URL_TRAILER = ".,;:!?)]}'\""
_MONTHS = {
    name: index
    for index, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = re.compile(
    rf"""\b(?:
        (?P<iso>\d{{4}}-\d{{2}}-\d{{2}})(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?)?
      | (?P<d1>\d{{1,2}})[/.](?P<m1>\d{{1,2}})[/.](?P<y1>\d{{4}})
      | (?P<mn2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}})
      | (?P<d3>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mn3>{_MONTH})\.?,?\s+(?P<y3>\d{{4}})
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\w])")


class InvalidInput(ValueError):
    code = "invalid_parameters"


class NumberFound(TypedDict):
    text: str
    value: float
    percent: bool


class DateFound(TypedDict):
    text: str
    iso: str | None


class Extraction(TypedDict, total=False):
    emails: list[str]
    urls: list[str]
    numbers: list[NumberFound]
    dates: list[DateFound]


def extract(text: str, kinds: list[Kind] | None = None) -> Extraction:
    if len(text) > MAX_CHARACTERS:
        raise InvalidInput(f"the text is longer than {MAX_CHARACTERS} characters")
    wanted = set(kinds or KINDS)
    if not wanted <= set(KINDS):
        raise InvalidInput(f"kinds must be among {', '.join(KINDS)}")
    taken: list[tuple[int, int]] = []
    emails = _unique(m.group() for m in _spans(_EMAIL, text, taken))
    urls = _unique(m.group().rstrip(_URL_TRAILER) for m in _spans(_URL, text, taken))
    dates = [_date(m) for m in _spans(_DATE, text, taken)]
    numbers = [_number(m.group()) for m in _NUMBER.finditer(text) if not _inside(m, taken)]
    found: Extraction = {}
    if "emails" in wanted:
        found["emails"] = emails[:MAX_ITEMS]
    if "urls" in wanted:
        found["urls"] = urls[:MAX_ITEMS]
    if "numbers" in wanted:
        found["numbers"] = numbers[:MAX_ITEMS]
    if "dates" in wanted:
        found["dates"] = dates[:MAX_ITEMS]
    return found


def _spans(
    pattern: re.Pattern[str], text: str, taken: list[tuple[int, int]]
) -> list[re.Match[str]]:
    found = [m for m in pattern.finditer(text) if not _inside(m, taken)]
    taken.extend(m.span() for m in found)
    return found


def _inside(match: re.Match[str], taken: list[tuple[int, int]]) -> bool:
    start, end = match.span()
    return any(start < stop and end > begin for begin, stop in taken)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _number(text: str) -> NumberFound:
    percent = text.endswith("%")
    digits = text.rstrip("%").replace(",", "")
    value = float(digits)
    return {"text": text, "value": int(value) if value.is_integer() else value, "percent": percent}


def _date(match: re.Match[str]) -> DateFound:
    groups = match.groupdict()
    try:
        if groups["iso"]:
            day = date.fromisoformat(groups["iso"])
        elif groups["y1"]:
            first, second = int(groups["d1"]), int(groups["m1"])
            if first <= 12 and second <= 12 and first != second:
                return {"text": match.group(), "iso": None}  # 03/04/2024: day or month first?
            day_of, month = (first, second) if first > 12 or second <= 12 else (second, first)
            day = date(int(groups["y1"]), month, day_of)
        elif groups["y2"]:
            day = date(int(groups["y2"]), _MONTHS[groups["mn2"].lower()], int(groups["d2"]))
        else:
            day = date(int(groups["y3"]), _MONTHS[groups["mn3"].lower()], int(groups["d3"]))
    except ValueError:
        return {"text": match.group(), "iso": None}
    return {"text": match.group(), "iso": day.isoformat()}
