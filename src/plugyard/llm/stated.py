"""What a conversation states: its words and its numbers, read as people write them.

The reader under the one judge of a model's arguments (llm/grounding.py), which every
call passes: a routed call, a call of a client's tool, and the tidying of any call
:func:`plugyard.llm.calls.respond` returns.

- Words are folded to one spelling (:func:`fold`): lower case, singular, "-re" as "-er",
  the degree sign dropped.
- Numbers are read as written ("350 F" → 350, "1,000" → 1000, "9pm" → 9 and 21, "3 in
  the afternoon" → 3 and 15, "two" → 2, "twenty five" → 25, "3 thousand" → 3000,
  "17.5%" → 17.5, 0.175 and 100, "March" → 3, "1e-9" → 1e-9), so a value a model
  derived from the request's own numbers is found: a date written "2023-03-12 15:00" for
  "the 12th of March 2023 at 3 in the afternoon".
- A quantity also reads in the other units a tool may take it in ("$1.2M" → 1,200,000,
  "50mH" → 0.05, "3 minutes" → 180, "5ft 10in" → 70, "two dozen" → 24, "quarterly" → 4).
- The dates a text means (:func:`dates_meant`): "tomorrow", a weekday, a span away from
  today or from a date it states (the check-out of "3 nights from 1st June 2022").
- Initials of runs of words ("sd" of "San Diego") are what a code may stand for.
- The JSON objects and arrays a text writes (:func:`json_in`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

#: A number as written; a comma groups thousands only before exactly three digits, and a
#: dot after a word is no decimal point, so "Jun.20,2023" is 20 and 2023, not 202,023.
_NUMBER = re.compile(
    r"(?<!\w)(?:(?<=[^\W\d_]\.)|(?<!\.))(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(\d+))?"
)
#: Scientific notation: "1e-9", "6.02E23".
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+]?\d{1,3})\b")
#: A quantity with a magnitude after it: "$1M", "1.2M", "10k", "3bn". A lower-case m or b
#: is a million or a billion only after a currency sign ("£5m"); elsewhere it is a unit.
_MAGNITUDE = re.compile(r"(?<![\w.])([$£€¥]?)(\d+(?:\.\d+)?)\s?(k|K|M|bn|B|m|b)\b")
_MAGNITUDES = {"k": 1e3, "K": 1e3, "M": 1e6, "m": 1e6, "bn": 1e9, "B": 1e9, "b": 1e9}
#: A quantity in an SI-prefixed unit ("100µF", "50mH", "2 km"), which a tool may take in
#: the base unit (0.0001, 0.05, 2000).
_SI = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(p|n|µ|μ|u|m|c|k|M|G)(F|H|Hz|Wh|W|V|A|g|m|s|J|Pa|C|Ω|L|l)\b"
)
_PREFIXES = {"p": 1e-12, "n": 1e-9, "µ": 1e-6, "μ": 1e-6, "u": 1e-6, "m": 1e-3, "c": 1e-2,
             "k": 1e3, "M": 1e6, "G": 1e9}  # fmt: skip
#: A duration ("3 minutes", "2.5 hrs"), which a tool may take in another unit of time.
_DURATION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\b",
    re.IGNORECASE,
)
_SECONDS = {"sec": 1, "min": 60, "hou": 3600, "hr": 3600, "day": 86400, "wee": 604800}
#: A height in feet and inches ("5ft 10in", "5'10\""), which a tool may take in inches.
_FEET_INCHES = re.compile(
    r"(?<![\w.])(\d+)\s?(?:ft|feet|foot|')\s?(\d{1,2})\s?(?:in|inch|inches|\"|'')(?!\w)"
)
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\b\.?", re.IGNORECASE)
#: The letters of an ISO 8601 date and time ("2024-03-10T14:30Z"), which are not words.
ISO_LETTERS = re.compile(r"(?<=\d)[TZ](?=\d|\b)")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SCALES = {"dozen": 12.0, "hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
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
    "week": (7,), "fortnight": (14,), "month": (30,), "year": (12, 365), "decade": (10,),
    "century": (100,), "pair": (2,), "couple": (2,),
    # how often a year: "compounded quarterly" is 4 periods a year
    "daily": (365,), "weekly": (52,), "biweekly": (26,), "monthly": (12,),
    "quarterly": (4,), "semiannually": (2,), "biannually": (2,), "annually": (1,),
    "yearly": (1,),
    # a month named states its number: "March 12th" is the 2023-03-12 a call writes
    "january": (1,), "jan": (1,), "february": (2,), "feb": (2,), "march": (3,),
    "mar": (3,), "april": (4,), "apr": (4,), "may": (5,), "june": (6,), "jun": (6,),
    "july": (7,), "jul": (7,), "august": (8,), "aug": (8,), "september": (9,),
    "sep": (9,), "sept": (9,), "october": (10,), "oct": (10,), "november": (11,),
    "nov": (11,), "december": (12,), "dec": (12,),
}  # fmt: skip
#: A whole number and a part of one: "three and a half", "2 and a quarter".
_AND_A_PART = re.compile(
    r"\b(\d+(?:\.\d+)?|[a-z]+(?:-[a-z]+)?)\s+and\s+(?:a|one)\s+(half|quarter)\b", re.IGNORECASE
)
_PARTS = {"half": 0.5, "quarter": 0.25}
#: An hour said with its part of the day: "3 in the afternoon" is 15:00.
_LATER_HOUR = re.compile(
    r"\b(\d{1,2})(?::\d{2})?\s*(?:o'?clock\s+)?(?:in\s+the\s+)?(?:afternoon|evening|at\s+night)\b",
    re.IGNORECASE,
)


#: Plurals no ending rule folds.
_IRREGULAR = {"women": "woman", "men": "man", "children": "child", "people": "person",
              "teeth": "tooth", "mice": "mouse", "geese": "goose"}  # fmt: skip


def fold(word: str) -> str:
    """One spelling of a word: lower case, no degree sign, singular, "-re" as "-er"."""
    word = word.lower().strip("°º")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
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


def letters_of(text: str) -> str:
    """The letters and digits of ``text`` in order, all else dropped: what two writings of
    one text ("orders[0" and "orders[0]", "345 + 678" and "345 - 678") share."""
    return "".join(c for c in text if c.isalnum())


#: A name a sentence writes: a run of words with a capital, not at the sentence's start
#: ("Istanbul", "New York" in "… in New York?").
_PROPER = re.compile(r"(?<=[^.!?\s]\s)\b[A-Z][a-z]+\b(?:\s[A-Z][a-z]+\b)*")


def proper_names_in(text: str) -> list[str]:
    """The names ``text`` writes inside its sentences, in order, each once."""
    return list(dict.fromkeys(_PROPER.findall(text)))


def names_in(text: str) -> list[str]:
    """The words ``text`` writes with a capital ("California"), folded: what a code in
    capitals ("CA") may stand for."""
    return [fold(w) for w in _WORD.findall(text) if w[0].isupper()]


#: Small words an initialism passes over: "USA" of "United States of America".
_SKIPPED = frozenset({"of", "and", "the", "for", "de"})


def initials_in(text: str) -> set[str]:
    """The initials of each run of two to five words of ``text`` ("sd" of "San Diego",
    "ssn" of "social security numbers", "usa" of "United States of America"), small
    words passed over. Two letters are initials only of two names written with
    capitals: two common words in a row are too many to tell one from chance."""
    words = _WORD.findall(text)
    found: set[str] = set()
    for start in range(len(words)):
        if words[start].lower() in _SKIPPED:
            continue
        letters, capitals = "", True
        for word in words[start : start + 8]:
            if word.lower() in _SKIPPED and letters:
                continue
            letters += word[0].lower()
            capitals = capitals and word[0].isupper()
            if len(letters) > 5:
                break
            if len(letters) >= 3 or (len(letters) == 2 and capitals):
                found.add(letters)
    return found


def initials_of(text: str) -> str:
    """The initials of all of ``text``'s words, small words after the first passed
    over: "la" of "Los Angeles", "usa" of "United States of America"."""
    words = [w.lower() for w in _WORD.findall(text)]
    return "".join(w[0] for i, w in enumerate(words) if i == 0 or w not in _SKIPPED)


#: A time of day as people write it: "7pm", "9:30 am", "16:45", "noon", "midnight".
_TIME_OF_DAY = re.compile(
    r"\b(?:(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\b\.?|(\d{1,2}):(\d{2})\b|(noon|midday|midnight))",
    re.IGNORECASE,
)


#: A time of day said as minutes past or to an hour: "quarter past 3 pm", "half past
#: seven", "20 minutes to 9", "10 past 4 pm".
_PAST_TO = re.compile(
    r"\b(quarter|half|\d{1,2})(\s+minutes?)?\s+(past|after|to|before)\s+"
    r"(\d{1,2}|[a-z]+)\b(?:\s*([ap])\.?\s*m\b\.?)?",
    re.IGNORECASE,
)


def _said_past_or_to(text: str) -> list[tuple[int, int, str]]:
    """Each time :data:`_PAST_TO` finds: its start, its end and the time as HH:MM."""
    found = []
    for match in _PAST_TO.finditer(text):
        minutes_said, unit, way, hour_said, half = match.groups()
        minutes = {"quarter": 15, "half": 30}.get(minutes_said.lower())
        if minutes is None:
            if unit is None and half is None:
                continue  # "3 to 4 apples" is no time
            minutes = int(minutes_said)
        spelled = _UNITS_WORDS.get(hour_said.lower())
        hour = int(hour_said) if hour_said.isdigit() else int(spelled or 0)
        before = way.lower() in ("to", "before")
        if (
            not 1 <= hour <= 12
            or not 0 < minutes < 60
            or (before and minutes_said.lower() == "half")
        ):
            continue
        if half is not None:
            hour = hour % 12 + (12 if half.lower() == "p" else 0)
        if before:
            hour, minutes = (hour - 1) % 24, 60 - minutes
        found.append((match.start(), match.end(), f"{hour:02d}:{minutes:02d}"))
    return found


def clocks_in(text: str) -> list[str]:
    """The times of day ``text`` states, as HH:MM, in order, each once: "7pm" is
    19:00, "noon" 12:00, "3 in the afternoon" 15:00, "quarter past 3 pm" 15:15 (not
    also 15:00), "quarter to seven" 06:45."""
    found: list[tuple[int, str]] = []
    said = _said_past_or_to(text)
    for match in _TIME_OF_DAY.finditer(text):
        if any(start <= match.start() < end for start, end, _ in said):
            continue
        twelve, minutes, half, hour, minute, word = match.groups()
        if word is not None:
            clock = "00:00" if word.lower() == "midnight" else "12:00"
        elif half is not None:
            if not 1 <= int(twelve) <= 12 or int(minutes or 0) >= 60:
                continue
            hours = int(twelve) % 12 + (12 if half.lower() == "p" else 0)
            clock = f"{hours:02d}:{int(minutes or 0):02d}"
        elif int(hour) < 24 and int(minute) < 60:
            clock = f"{int(hour):02d}:{minute}"
        else:
            continue
        found.append((match.start(), clock))
    for match in _LATER_HOUR.finditer(text):
        if 1 <= int(match.group(1)) < 12:
            minutes = re.match(r"\d{1,2}:(\d{2})", match.group())
            later = f"{int(match.group(1)) + 12:02d}:{minutes.group(1) if minutes else '00'}"
            found = [(at, c) for at, c in found if at != match.start()] + [(match.start(), later)]
    found += [(start, clock) for start, _, clock in said]
    return list(dict.fromkeys(clock for _, clock in sorted(found)))


#: A text quoted for a tool to work on; straight single quotes are left out, since they
#: are apostrophes as often as quotes.
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|‘([^’]+)’|`([^`]+)`')
#: What stands against a quote that is part of a longer token: the backticked `1` of
#: "foo[?bar > `1`]" is a literal of an expression, not a text of its own.
_GLUED = re.compile(r"[\w\[\](){}]")


def quoted_in(text: str, *, alone: bool = False) -> list[str]:
    """The texts ``text`` quotes, in order, each once; ``alone``: only those that stand
    as a token of their own (space or sentence punctuation on either side)."""
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        start, end = match.span()
        before, after = text[start - 1 : start], text[end : end + 1]
        if alone and (_GLUED.match(before) or _GLUED.match(after)):
            continue
        quote = next(q for q in match.groups() if q)
        if quote not in found:
            found.append(quote)
    return found


#: What marks a token as code rather than a word: brackets, operators of a query.
_CODE_MARK = re.compile(r"[\[\](){}*&@|=<>]")
_OPENS, _CLOSES = "([{", ")]}"
_NON_SPACE = re.compile(r"\S+")
#: An expression left open begins as one: a name and its bracket ("people[?age").
_OPENED = re.compile(r"[A-Za-z_@$][\w.]*[\[(]")
#: The tokens one code span may run over (an expression with spaces after its commas).
_CODE_TOKENS = 24


def code_in(text: str) -> list[str]:
    """The expressions ``text`` writes unquoted, in order, each once: a run of tokens
    with balanced brackets that holds a bracket or an operator and a letter
    ("items[*].name", "sort_by(people, &age)[-1].name"), beginning with a name and
    without the sentence's punctuation after it: a quote, a JSON document or a remark in
    brackets is not one. One a name opens and never closes ("people[?age >= `18`.name,
    is that valid?") runs to the sentence's punctuation."""
    tokens = [m.span() for m in _NON_SPACE.finditer(text)]
    found: list[str] = []
    at = 0
    while at < len(tokens):
        end = at
        while (
            _depth(text[tokens[at][0] : tokens[end][1]]) > 0
            and end + 1 < len(tokens)
            and end - at < _CODE_TOKENS
        ):
            end += 1
        if _depth(text[tokens[at][0] : tokens[end][1]]) > 0:
            # Never closed: an expression someone asks about because it fails
            # ("people[?age >= `18`.name, is that valid?") ends where the sentence's
            # punctuation follows one of its tokens.
            end = next((i for i in range(at, end + 1)
                        if text[tokens[i][1] - 1] in ",;?!"), end)  # fmt: skip
        span = text[tokens[at][0] : tokens[end][1]].rstrip("?.,;:!")
        at = end + 1
        if (
            (_depth(span) == 0 or _OPENED.match(span))
            and _CODE_MARK.search(span)
            and _WORD.search(span)
            and (span[0].isalnum() or span[0] in "_@$")  # not "(and coffee)"
            and span not in found
        ):
            found.append(span)
    return found


def _depth(span: str) -> int:
    return sum(span.count(c) for c in _OPENS) - sum(span.count(c) for c in _CLOSES)


def asked_in(text: str) -> str:
    """``text`` without what it works on: the texts it quotes and the JSON documents it
    writes taken out, leaving the words it asks with."""
    pieces, at = [], 0
    for start, end, _ in json_spans(text, tries=USER_JSON_TRIES):
        pieces += [text[at:start], " "]
        at = end
    return _QUOTED.sub(" ", "".join([*pieces, text[at:]]))


def numbers_in(text: str, *, readings: bool = True) -> set[float]:
    """Every number ``text`` states, as people write them (see the module's notes).
    ``readings=False`` leaves out what a percent sign or word would make of them (100,
    each number over 100): in a model's expression "100 % 7" is a remainder, and its
    7 is not the 0.07 the request never states."""
    found: set[float] = set()
    text = ISO_LETTERS.sub(" ", text)  # "…-15T09:00": the hour is a number too
    for match in _NUMBER.finditer(text):
        whole, fraction = match.group(1).replace(",", ""), match.group(2)
        found.add(float(f"{whole}.{fraction}" if fraction else whole))
        if readings and "," in match.group(1):
            # "[200,300,400,500]" is a list as often as "1,000" is a thousand
            found.update(float(piece) for piece in match.group(1).split(","))
    for match in _SCIENTIFIC.finditer(text):
        found.add(float(f"{match.group(1)}e{match.group(2)}"))
    for match in _CLOCK.finditer(text):
        hour = int(match.group(1))
        if match.group(3).lower() == "p" and hour < 12:
            found.add(float(hour + 12))
        elif match.group(3).lower() == "a" and hour == 12:
            found.add(0.0)
    for match in _LATER_HOUR.finditer(text):
        if int(match.group(1)) < 12:
            found.add(float(int(match.group(1)) + 12))
    words = [w.lower() for w in _WORD.findall(text)]
    for word in words:
        found.update(float(v) for v in _NUMBER_WORDS.get(fold(word), ()))
    found.update(spelled_numbers(text))
    for match in _AND_A_PART.finditer(text):  # "three and a half years" is 3.5 years
        said, part = match.groups()
        wholes = {float(said)} if said[0].isdigit() else spelled_numbers(said)
        found.update(w + _PARTS[part.lower()] for w in wholes)
    for _, _, clock in _said_past_or_to(text):  # "quarter to seven" states 06:45
        found.update(float(piece) for piece in clock.split(":"))
    # "3 thousand" is 3000, "2.5 million" 2,500,000.
    for match in re.finditer(r"(\d+(?:\.\d+)?)\s*(dozen|hundred|thousand|million|billion)\b", text,
                             re.IGNORECASE):  # fmt: skip
        found.add(float(match.group(1)) * _SCALES[match.group(2).lower()])
    if not readings:
        return found
    found |= _quantities_in(text)
    if "%" in text:
        found.add(100.0)
    for value in list(found):  # a percentage may be written as its fraction
        if "%" in text or "percent" in words:
            found.add(value / 100)
    return found


def _quantities_in(text: str) -> set[float]:
    """What the quantities of ``text`` read as in the units a tool may take: "$1.2M" as
    1,200,000, "50mH" as 0.05, "3 minutes" as 180 seconds and 0.05 hours, "5ft 10in"
    as 70 inches; the year, month and day of a date however written ("2023.3.1"). Each
    is the stated quantity, only counted in another unit."""
    found: set[float] = set()
    for match in _MAGNITUDE.finditer(text):
        sign, number, scale = match.groups()
        if scale in ("m", "b") and not sign:
            continue
        found.add(float(number) * _MAGNITUDES[scale])
    for match in _SI.finditer(text):
        found.add(float(match.group(1)) * _PREFIXES[match.group(2)])
    for match in _DURATION.finditer(text):
        unit = match.group(2).lower()
        seconds = float(match.group(1)) * _SECONDS[unit[:2] if unit.startswith("hr") else unit[:3]]
        found.update(seconds / each for each in (1, 60, 3600, 86400, 604800))
    for match in _FEET_INCHES.finditer(text):
        found.add(float(int(match.group(1)) * 12 + int(match.group(2))))
    for day in _dates_in(text):
        found.update((float(day.year), float(day.month), float(day.day)))
    return found


_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
#: A date as people write it: "2022-06-01", "1st June 2022", "June 1, 2022",
#: "Jun.1,2022", "06/01/2022" (month first), "2023.3.1" and "1.3.2023" (day first).
_DATES = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (
        re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s*(\d{{4}})\b", re.I),
        "dmy",
    ),
    (re.compile(rf"\b{_MONTH}\s*(\d{{1,2}})(?:st|nd|rd|th)?,?\s*(\d{{4}})\b", re.I), "mdy"),
    (re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"), "m/d/y"),
    (re.compile(r"\b(\d{4})\.(\d{1,2})\.(\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b"), "dmy."),
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: How long a stay or a span lasts: "3 nights", "a week", "two days".
_SPAN = re.compile(r"\b(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                   r"twelve|fourteen|thirty)\s+(nights?|days?|weeks?)\b", re.I)  # fmt: skip


#: Days named by their distance from today (or from a date the text states).
_RELATIVE = {"day after tomorrow": 2, "day before yesterday": -2, "tomorrow": 1,
             "yesterday": -1, "today": 0, "tonight": 0, "next week": 7,
             "last week": -7}  # fmt: skip
_ANCHORS = 8
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def dates_meant(text: str, today: dt.date) -> set[dt.date]:
    """The dates ``text`` names relative to ``today`` or to a date it states (its
    anchors): "tomorrow", "yesterday", "next week"; a weekday (the one before and the
    next two, since "Friday" and "next Friday" differ by whom you ask); "the weekend";
    and a span away ("in 3 days", "3 nights starting from 1st June 2022", which ends
    on 2022-06-04, the check-out a booking tool asks for)."""
    # A request states a date or two; a pasted calendar's hundreds would each multiply
    # the dates meant, so only the first few anchor them.
    anchors = {today, *sorted(_dates_in(text))[:_ANCHORS]}
    lowered = text.lower()
    offsets: set[int] = set()
    for phrase, offset in _RELATIVE.items():
        if re.search(rf"\b{phrase}\b", lowered):
            offsets.add(offset)
            lowered = lowered.replace(phrase, " ")
    weekdays = {i for i, name in enumerate(_WEEKDAYS) if re.search(rf"\b{name}s?\b", lowered)}
    if re.search(r"\bweekends?\b", lowered):
        weekdays |= {5, 6}
    spans = []
    for match in _SPAN.finditer(text):
        count, unit = match.group(1).lower(), match.group(2).lower()
        number = int(count) if count.isdigit() else int(_UNITS_WORDS.get(count, 1))
        spans.append(number * (7 if unit.startswith("week") else 1))
    offsets |= {sign * span for span in spans for sign in (1, -1)}
    found: set[dt.date] = set()
    for anchor in anchors:
        for offset in offsets:
            with contextlib.suppress(OverflowError):
                found.add(anchor + dt.timedelta(days=offset))
        for weekday in weekdays:
            ahead = (weekday - anchor.weekday()) % 7 or 7
            for offset in (ahead - 7, ahead, ahead + 7):
                with contextlib.suppress(OverflowError):
                    found.add(anchor + dt.timedelta(days=offset))
    return found


def states_date(text: str, today: dt.date) -> bool:
    """Whether ``text`` names a date, written out ("2024-03-10", "3 March 2024") or
    relative to ``today`` ("tomorrow")."""
    return bool(_dates_in(text) or dates_meant(text, today))


def _dates_in(text: str) -> set[dt.date]:
    found: set[dt.date] = set()
    for pattern, order in _DATES:
        for match in pattern.finditer(text):
            first, second, third = match.groups()
            if order == "ymd":
                year, month, day = int(first), int(second), int(third)
            elif order == "dmy":
                day, month, year = int(first), _MONTHS.index(second[:3].lower()) + 1, int(third)
            elif order == "dmy.":
                day, month, year = int(first), int(second), int(third)
            elif order == "mdy":
                month, day, year = _MONTHS.index(first[:3].lower()) + 1, int(second), int(third)
            else:
                month, day, year = int(first), int(second), int(third)
            try:
                found.add(dt.date(year, month, day))
            except ValueError:
                continue
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


_PERCENT = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)",
                      re.IGNORECASE)  # fmt: skip


def percents_in(text: str) -> set[float]:
    """The numbers ``text`` states as percentages ("17.5%", "5 percent")."""
    return {float(n.replace(",", "")) for n in _PERCENT.findall(text)}


def spells_boolean(value: object) -> bool:
    """A yes/no written as a string, as a client whose parameters are all strings writes
    it (BFCL's Java and JavaScript tools): implied by a request, like a boolean."""
    return isinstance(value, str) and value.strip().lower() in {"true", "false"}


def stem(word: str) -> str:
    """A looser :func:`fold`: the -ing, -ed and -ly endings cut too, so "in detail"
    states "detailed"; for judging whether a value was stated at all."""
    word = fold(word)
    for ending in ("ing", "ed", "ly"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


_DECODER = json.JSONDecoder()


#: At most this many places where a JSON document might begin are tried in a user's
#: text: a hostile one may hold a bracket at every character.
USER_JSON_TRIES = 64


def json_in(text: str, *, tries: int | None = None) -> Iterator[Any]:
    """The JSON objects and arrays ``text`` writes, outermost first, from each ``{`` or
    ``[`` that begins one. A start that does not decode is passed by one character, so
    the calls inside a list cut off at its end are still found; a run of brackets
    nested past the decoder's depth is passed whole. ``tries``: at most this many
    starts, for a text nobody bounded."""
    for _, _, value in json_spans(text, tries=tries):
        yield value


def json_spans(text: str, *, tries: int | None = None) -> Iterator[tuple[int, int, Any]]:
    """Where :func:`json_in` finds each JSON value: its start, its end and the value."""
    index, tried = 0, 0
    while tries is None or tried < tries:
        found = [i for i in (text.find("{", index), text.find("[", index)) if i >= 0]
        if not found:
            return
        start, tried = min(found), tried + 1
        try:
            value, index = _DECODER.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        except RecursionError:
            index = start + 1
            while index < len(text) and text[index] in "[{ \t\n":
                index += 1
            continue
        yield start, index, value
