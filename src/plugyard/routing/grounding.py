"""Whether the arguments a model wrote come from the request (docs/routing.md, "Grounding").

A small model asked for arguments often copies them from the tool's description ("e.g.
10 km") instead of the user's message. So before a call is made, each argument value
is checked against the evidence of this request: the user's words, the schema's
default and enum, and the output of earlier tool calls in the same request.

- A number is grounded when the evidence holds the same number ("350 F" → 350; "1,000"
  → 1000; "9pm" → 9 and 21; "two" → 2; "17.5%" → 17.5 and 100), or it is 0 or 1.
- A short name-like string ("km", "Asia/Tokyo", "°F") is grounded when its numbers are
  and at least one of its words is in the evidence, case and spacing ignored, plurals
  and spellings folded ("metres" = "meter"), and unit symbols matched to their names
  ("F" = "fahrenheit", "mi" = "miles", "lb" = "pounds").
- Code-like strings (an expression, a query, a pattern) only need their numbers
  grounded; longer prose needs half of its words.

Today's date counts as evidence, so "9am" may become today's ISO date; any other date
must be in the request.

Before the check, :func:`normalise` puts what the request states into the form the
tool's schema asks for, and takes out what the model added on its own; it never adds a
value. A unit word becomes the enum's symbol ("feet" → "ft") when exactly one member
names it; for a parameter that takes a time of day (its ``format`` is ``time`` or its
description says "HH:MM" or "time of day"), "9am" becomes "09:00", and a date or UTC
offset the request does not state is cut from a date and time ("2023-09-15T09:00:00Z"
for "9am in Lisbon" → "09:00"). Numbers written in words count as numbers ("twenty
five" → 25, "three hundred and fifty" → 350).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\b\.?", re.IGNORECASE)
#: The letters of an ISO 8601 date and time ("2024-03-10T14:30Z"), which are not words.
_ISO_LETTERS = re.compile(r"(?<=\d)[TZ](?=\d|\b)")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CODE = re.compile(r"[(){}\[\]=<>*+^|;\\$]|\b(select|from|where)\b", re.IGNORECASE)
_SCALES = {"hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_NUMBER_WORDS: Mapping[str, tuple[float, ...]] = {
    "zero": (0,), "one": (1,), "two": (2,), "three": (3,), "four": (4,), "five": (5,),
    "six": (6,), "seven": (7,), "eight": (8,), "nine": (9,), "ten": (10,), "eleven": (11,),
    "twelve": (12,), "thirteen": (13,), "fourteen": (14,), "fifteen": (15,),
    "sixteen": (16,), "seventeen": (17,), "eighteen": (18,), "nineteen": (19,),
    "twenty": (20,), "thirty": (30,), "forty": (40,), "fifty": (50,), "sixty": (60,),
    "seventy": (70,), "eighty": (80,), "ninety": (90,), "hundred": (100,),
    "thousand": (1000,), "million": (1e6,), "billion": (1e9,), "dozen": (12,),
    "half": (0.5, 2), "quarter": (0.25, 4), "double": (2,), "twice": (2,), "triple": (3,),
    "percent": (100,), "squared": (2,), "square": (2, 0.5), "cubed": (3,), "cube": (3,),
    "noon": (12,), "midnight": (0, 24), "hour": (60, 3600), "minute": (60,), "day": (24,),
}  # fmt: skip
#: Unit symbols and the names people write (folded as :func:`fold` folds words).
_SYNONYMS: Mapping[str, frozenset[str]] = {
    key: frozenset(values)
    for key, values in {
        "f": {"fahrenheit"}, "c": {"celsius", "centigrade"}, "k": {"kelvin"},
        "r": {"rankine"}, "lb": {"pound"}, "lbs": {"pound"}, "oz": {"ounce"},
        "ft": {"foot", "feet"}, "feet": {"foot"}, "in": {"inch"}, "yd": {"yard"},
        "mi": {"mile"}, "nmi": {"nautical"}, "h": {"hour"}, "hr": {"hour"},
        "min": {"minute"}, "s": {"second"}, "sec": {"second"}, "ms": {"millisecond"},
        "d": {"day"}, "wk": {"week"}, "yr": {"year"}, "l": {"liter"}, "ml": {"milliliter"},
        "gal": {"gallon"}, "pt": {"pint"}, "tbsp": {"tablespoon"}, "tsp": {"teaspoon"},
        "st": {"stone"}, "t": {"tonne", "ton"}, "g": {"gram"}, "kg": {"kilogram", "kilo"},
        "b": {"byte"}, "kb": {"kilobyte"}, "mb": {"megabyte"}, "gb": {"gigabyte"},
        "tb": {"terabyte"}, "usd": {"dollar"}, "eur": {"euro"}, "gbp": {"sterling"},
        "now": {"current", "currently", "moment"}, "m": {"meter"},
    }.items()
}  # fmt: skip
_FILLER = frozenset({"deg", "degree", "the", "a", "an", "of", "in", "to", "and", "or"})


def fold(word: str) -> str:
    """One spelling of a word: lower case, no degree sign, singular, "-re" as "-er"."""
    word = word.lower().strip("°º")
    if word.startswith("deg") and len(word) in (4, 5) and word[3:] in ("c", "f", "k", "r"):
        word = word[3:]
    if len(word) > 3 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 4 and word.endswith("re"):
        word = word[:-2] + "er"
    return word


def words_in(text: str) -> list[str]:
    """The words of ``text``, folded."""
    return [fold(w) for w in _WORD.findall(text)]


def numbers_in(text: str) -> set[float]:
    """Every number ``text`` states, as people write them (see the module's notes)."""
    found: set[float] = set()
    text = _ISO_LETTERS.sub(" ", text)  # "…-15T09:00": the hour is a number too
    for match in _NUMBER.finditer(text):
        whole, fraction = match.group(1).replace(",", ""), match.group(2)
        found.add(float(f"{whole}.{fraction}" if fraction else whole))
    for match in _CLOCK.finditer(text):
        hour = int(match.group(1))
        if match.group(3).lower() == "p" and hour < 12:
            found.add(float(hour + 12))
        elif match.group(3).lower() == "a" and hour == 12:
            found.add(0.0)
    words = [w.lower() for w in _WORD.findall(text)]
    for word in words:
        found.update(float(v) for v in _NUMBER_WORDS.get(fold(word), ()))
    found.update(spelled_numbers(text))
    if "%" in text:
        found.add(100.0)
    # "3 thousand" is 3000, "2.5 million" 2,500,000.
    for match in re.finditer(r"(\d+(?:\.\d+)?)\s*(hundred|thousand|million|billion)\b", text,
                             re.IGNORECASE):  # fmt: skip
        found.add(float(match.group(1)) * _SCALES[match.group(2).lower()])
    for value in list(found):  # a percentage may be written as its fraction
        if "%" in text or "percent" in words:
            found.add(value / 100)
    return found


_UNITS_WORDS: Mapping[str, float] = {
    name: float(value)
    for value, name in enumerate((
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
        "seventeen", "eighteen", "nineteen",
    ))
}  # fmt: skip
_TENS_WORDS: Mapping[str, float] = {
    name: float(10 * (index + 2))
    for index, name in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
    )
}
#: Words and the punctuation that ends a run of number words.
_TOKEN = re.compile(r"[^\W\d_]+|[^\w\s-]|\d+", re.UNICODE)


def spelled_numbers(text: str) -> set[float]:
    """The numbers that runs of number words in ``text`` spell, each run read as one
    number: "twenty five" → 25, "three hundred and fifty" → 350, "two million" →
    2,000,000. Punctuation, a digit or any other word ends a run; "and" continues one
    only after "hundred" or a larger scale, as in "one hundred and one"."""
    found: set[float] = set()
    total = current = 0.0
    running = False
    previous = ""
    for token in (t.lower() for t in _TOKEN.findall(text)):
        if token in _UNITS_WORDS or token in _TENS_WORDS:
            current += _UNITS_WORDS.get(token) or _TENS_WORDS.get(token) or 0.0
        elif token == "hundred" and running:
            current = max(current, 1.0) * 100
        elif token in _SCALES and running:
            total += max(current, 1.0) * _SCALES[token]
            current = 0.0
        elif token == "and" and running and previous in _SCALES:
            previous = token
            continue
        else:
            if running:
                found.add(total + current)
            total = current = 0.0
            running = False
            previous = token
            continue
        running = True
        previous = token
    if running:
        found.add(total + current)
    return found


@dataclass(frozen=True, slots=True)
class Evidence:
    """What an argument may come from: the numbers and words of the request, earlier
    tool output, and today's date."""

    numbers: frozenset[float]
    words: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str], data: Iterable[Any] = (),
           today: dt.date | None = None) -> Evidence:  # fmt: skip
        parts = list(texts)
        parts += [json.dumps(d, ensure_ascii=False, default=str) for d in data]
        numbers: set[float] = set()
        words: set[str] = set()
        for part in parts:
            numbers |= numbers_in(part)
            words.update(words_in(part))
        day = today or dt.date.today()
        numbers |= {float(day.year), float(day.month), float(day.day)}
        return cls(frozenset(numbers), frozenset(words))

    def has_number(self, value: float) -> bool:
        value = abs(value)
        if value in (0.0, 1.0) or value in self.numbers:
            return True
        return any(math.isclose(value, n, rel_tol=1e-9) for n in self.numbers)

    def has_word(self, word: str) -> bool:
        if word in self.words:
            return True
        names = _SYNONYMS.get(word, frozenset())
        if names & self.words:
            return True
        for known in self.words:
            if word in _SYNONYMS.get(known, ()):
                return True
            if _abbreviates(word, known) or _abbreviates(known, word):
                return True
        return False


def _abbreviates(short: str, long: str) -> bool:
    """``short`` (2-4 letters) is an abbreviation of ``long``: same first letter, its
    letters in order ("km" of "kilometer", "mi" of "mile", "mib" of "mebibyte")."""
    if not 2 <= len(short) <= 4 or len(long) <= len(short) or short[0] != long[0]:
        return False
    rest = iter(long[1:])
    return all(letter in rest for letter in short[1:])


@dataclass(frozen=True, slots=True)
class Ungrounded:
    """One argument value not found in the evidence: where it is, and why."""

    pointer: str
    value: Any
    reason: str
    required: bool

    @property
    def name(self) -> str:
        return self.pointer.lstrip("/").split("/", 1)[0]


_AMPM = re.compile(r"^\s*(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\.?\s*$", re.IGNORECASE)
_DATE_TIME = re.compile(
    r"^\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*"
    r"(Z|[+-]\d{2}:?\d{2})?\s*$",
    re.IGNORECASE,
)
_OFFSET_STATED = re.compile(r"\b(utc|gmt|z)\b|[+-]\d{1,2}:?\d{2}\b", re.IGNORECASE)


def normalise(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], texts: Sequence[str]
) -> dict[str, Any]:
    """``arguments`` in the form ``schema`` asks for, from what ``texts`` (the
    request) state: see the module's notes. A value it cannot place is left as the
    model wrote it, for :func:`check` to judge."""
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    said = " ".join(texts)
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        sub = props.get(name)
        out[name] = _normal(value, sub if isinstance(sub, Mapping) else {}, said)
    return out


def _normal(value: Any, schema: Mapping[str, Any], said: str) -> Any:
    if not isinstance(value, str):
        return value
    enum = schema.get("enum")
    if isinstance(enum, list) and not _declared(value, schema):
        return _enum_member(value, [e for e in enum if isinstance(e, str)])
    if _takes_clock(schema):
        return _clock(value, said)
    return value


def _enum_member(value: str, members: Sequence[str]) -> str:
    """The one member that ``value`` names ("feet" → "ft"), else ``value``."""
    said = frozenset(words_in(value))
    named = Evidence(frozenset(), said)
    # A member that is the value's word or its symbol first ("fahrenheit" → "°F"), then
    # one that abbreviates it ("kilometres" → "km").
    exact = [m for m in members if (w := words_in(m)) and all(
        x in said or _SYNONYMS.get(x, frozenset()) & said for x in w)]  # fmt: skip
    found = exact or [
        m for m in members if (w := words_in(m)) and all(named.has_word(x) for x in w)
    ]
    return found[0] if len(found) == 1 else value


def _takes_clock(schema: Mapping[str, Any]) -> bool:
    """The parameter takes a time of day on its own (not only a full date and time)."""
    if schema.get("format") == "time":
        return True
    described = schema.get("description")
    return isinstance(described, str) and (
        "HH:MM" in described or "time of day" in described.lower()
    )


def _clock(value: str, said: str) -> str:
    """ "9am" as 09:00; a date and time without the date and the offset that the
    request does not state."""
    ampm = _AMPM.match(value)
    if ampm is not None:
        twelve, minutes = int(ampm.group(1)), int(ampm.group(2) or 0)
        if 1 <= twelve <= 12 and minutes < 60:
            hours = twelve % 12 + (12 if ampm.group(3).lower() == "p" else 0)
            return f"{hours:02d}:{minutes:02d}"
        return value
    found = _DATE_TIME.match(value)
    if found is None:
        return value
    year, month, day, hour, minute, second, offset = found.groups()
    date = f"{year}-{month}-{day}"
    clock = f"{int(hour):02d}:{minute}" + (f":{second}" if second and second != "00" else "")
    if year in said:  # the request states the date (in some form): keep it
        clock = f"{date}T{clock}"
    if offset is not None and _OFFSET_STATED.search(said) is not None:
        clock += offset.upper()
    return clock


def check(arguments: Mapping[str, Any], schema: Mapping[str, Any], evidence: Evidence,
          described: str = "") -> tuple[Ungrounded, ...]:  # fmt: skip
    """The argument values that are not grounded, in argument order. ``described`` is
    the operation's description and examples, named in the reason when a value comes
    from there."""
    required = set(_strings(schema.get("required")))
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    found: list[Ungrounded] = []
    for name, value in arguments.items():
        sub = props.get(name)
        found += _check(f"/{_escape(name)}", value, sub if isinstance(sub, Mapping) else {},
                        evidence, described, name in required)  # fmt: skip
    for name in sorted(required - set(arguments)):
        sub = props.get(name)
        if not (isinstance(sub, Mapping) and "default" in sub):
            found.append(Ungrounded(f"/{_escape(name)}", None, "it is missing", True))
    return tuple(found)


def _check(pointer: str, value: Any, schema: Mapping[str, Any], evidence: Evidence,
           described: str, required: bool) -> list[Ungrounded]:  # fmt: skip
    if _declared(value, schema):
        return []
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        out: list[Ungrounded] = []
        for key, item in value.items():
            sub = props.get(key)
            out += _check(f"{pointer}/{_escape(str(key))}", item,
                          sub if isinstance(sub, Mapping) else {}, evidence, described,
                          required)  # fmt: skip
        return out
    if isinstance(value, list):
        items = schema.get("items")
        sub = items if isinstance(items, Mapping) else {}
        out = []
        for index, item in enumerate(value):
            out += _check(f"{pointer}/{index}", item, sub, evidence, described, required)
        return out
    reason = _why(value, evidence)
    if reason is None:
        return []
    if described and _from(value, described):
        reason += " (it is an example from the tool's description)"
    return [Ungrounded(pointer, value, reason, required)]


def _why(value: Any, evidence: Evidence) -> str | None:
    """Why ``value`` is not grounded, or ``None`` when it is."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if evidence.has_number(float(value)):
            return None
        return f"{_show(value)} does not appear in the request"
    if not isinstance(value, str):
        return None
    missing = sorted(n for n in numbers_in(value) if not evidence.has_number(n))
    if missing:
        return f"{_show(missing[0])} in {value!r} does not appear in the request"
    if _CODE.search(value):
        return None  # an expression or a query: its numbers are what a model can invent
    words = [w for w in words_in(_ISO_LETTERS.sub(" ", value)) if w not in _FILLER]
    if not words:
        return None
    grounded = sum(1 for w in words if evidence.has_word(w))
    if len(words) <= 4:
        return None if grounded else f"{value!r} does not appear in the request"
    if grounded * 2 >= len(words):
        return None
    return f"most of {_cut(value)!r} does not appear in the request"


def _declared(value: Any, schema: Mapping[str, Any]) -> bool:
    """The value is the schema's default or one of its enum or const values."""
    if "default" in schema and schema["default"] == value:
        return True
    if "const" in schema and schema["const"] == value:
        return True
    enum = schema.get("enum")
    if isinstance(enum, list):
        if value in enum:
            return True
        if isinstance(value, str):
            return value.strip().lower() in {str(e).lower() for e in enum}
    return False


def _from(value: Any, described: str) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return float(value) in numbers_in(described)
    text = str(value).strip().lower()
    return (
        bool(text) and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", described.lower()) is not None
    )


def described_text(description: str, examples: Sequence[Any], parameters: Any) -> str:
    """An operation's own words, where a copied example would come from."""
    return " ".join([description, *map(str, examples), json.dumps(parameters, default=str)])


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _show(value: float | int) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cut(text: str, cap: int = 60) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"
