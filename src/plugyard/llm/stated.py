"""What a conversation states: its words and its numbers, read as people write them.

The reader under the one judge of a model's arguments (llm/grounding.py), which every
call passes: a routed call, a call of a client's tool, and the tidying of any call
:func:`plugyard.llm.calls.respond` returns.

- Words are folded to one spelling (:func:`fold`): lower case, singular, "-re" as "-er",
  the degree sign dropped.
- Numbers are read as written ("350 F" → 350, "1,000" → 1000, "9pm" → 9 and 21, "3 in
  the afternoon" → 3 and 15, "two" → 2, "twenty five" → 25, "3 thousand" → 3000,
  "17.5%" → 17.5, 0.175 and 100, "March" → 3), so a value a model derived from the
  request's own numbers is found: a date written "2023-03-12 15:00" for "the 12th of
  March 2023 at 3 in the afternoon".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\b\.?", re.IGNORECASE)
#: The letters of an ISO 8601 date and time ("2024-03-10T14:30Z"), which are not words.
ISO_LETTERS = re.compile(r"(?<=\d)[TZ](?=\d|\b)")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
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
    "week": (7,), "fortnight": (14,), "decade": (10,), "century": (100,), "pair": (2,),
    "couple": (2,),
    # a month named states its number: "March 12th" is the 2023-03-12 a call writes
    "january": (1,), "jan": (1,), "february": (2,), "feb": (2,), "march": (3,),
    "mar": (3,), "april": (4,), "apr": (4,), "may": (5,), "june": (6,), "jun": (6,),
    "july": (7,), "jul": (7,), "august": (8,), "aug": (8,), "september": (9,),
    "sep": (9,), "sept": (9,), "october": (10,), "oct": (10,), "november": (11,),
    "nov": (11,), "december": (12,), "dec": (12,),
}  # fmt: skip
#: An hour said with its part of the day: "3 in the afternoon" is 15:00.
_LATER_HOUR = re.compile(
    r"\b(\d{1,2})(?::\d{2})?\s*(?:o'?clock\s+)?(?:in\s+the\s+)?(?:afternoon|evening|at\s+night)\b",
    re.IGNORECASE,
)


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


def letters_of(text: str) -> str:
    """The letters and digits of ``text`` in order, all else dropped: what two writings of
    one text ("orders[0" and "orders[0]", "345 + 678" and "345 - 678") share."""
    return "".join(c for c in text if c.isalnum())


def names_in(text: str) -> list[str]:
    """The words ``text`` writes with a capital ("California"), folded: what a code in
    capitals ("CA") may stand for."""
    return [fold(w) for w in _WORD.findall(text) if w[0].isupper()]


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
    # "3 thousand" is 3000, "2.5 million" 2,500,000.
    for match in re.finditer(r"(\d+(?:\.\d+)?)\s*(hundred|thousand|million|billion)\b", text,
                             re.IGNORECASE):  # fmt: skip
        found.add(float(match.group(1)) * _SCALES[match.group(2).lower()])
    if not readings:
        return found
    if "%" in text:
        found.add(100.0)
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
