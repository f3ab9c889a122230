"""Whether the values a model wrote come from the request: one judge for every call
(docs/routing.md, "Grounding").

A small model asked for arguments often copies them from the tool's description ("e.g.
10 km") instead of the user's message, and fills optional parameters with values it
invented. So each argument value is checked against the :class:`Evidence` of this
request: the user's words, the output of earlier tool calls in the same request, and
today's date. :func:`check` is asked by every caller: the routing flow before it calls
a yard operation or hands out a client's call, and :func:`plugyard.llm.calls.respond`
when it tidies the calls a model wrote.

What a value needs:

- A number: the evidence holds the same number ("350 F" → 350; "1,000" → 1000; "9pm" →
  9 and 21; "two" → 2; "17.5%" → 17.5 and 100), or the same quantity in another unit
  ("3 minutes" → 180; llm/stated.py).
- A string the request holds as written (case, spacing and underscores ignored) is
  stated. Otherwise its numbers must be (0 always counts inside a string: the "00" of
  "15:00"); a code-like string (an expression, a query, a pattern) needs no
  more. A name-like string of up to four words needs one of its words in the evidence,
  plurals, spellings and -ing/-ed endings folded ("metres" = "meter"), and unit symbols
  matched to their names ("F" = "fahrenheit", "mi" = "miles", "lb" = "pounds"); a
  one-word value may be a unit's abbreviation ("km" of "kilometres") or, written in
  capitals, a name's ("CA" of "California"), or the initials of the request's words
  ("SD" of "San Diego"); a name of several words may be the initials the request
  writes ("Los Angeles" for "LA"). A currency's code is named by its currency ("GBP",
  "British pounds") and a country by its adjective ("Germany", "German"). Longer prose
  needs three of every four of its words: a text the model wrote around a few of the
  request's words ("Hello, world! This is a test cover letter for a marketing job." for
  "Write a cover letter for a marketing job") is its own, not the user's. A command's
  flags ("/F") and a query's keys ("artist:") are syntax, not words of the value.
- A list or an object: each of its items.

A required argument may also be the schema's default, const or enum member, or the
number 0 or 1 (alone or inside a string), or hold nothing to invent (only common
words): the tool needs a value, and these are the schema's own or too plain to be an
invention. An optional argument is kept only when the evidence states it or it is the
schema's default or const: anything else is left out, so that the tool's own default
applies.

Before the check, :func:`normalise` puts what the request states into the form the
tool's schema asks for, and takes out what the model added on its own; it never adds a
value. A unit word becomes the enum's symbol ("feet" → "ft") when exactly one member
names it; for a parameter that takes a time of day (its ``format`` is ``time`` or its
description says "HH:MM" or "time of day"), "9am" becomes "09:00", and a date or UTC
offset the request does not state is cut from a date and time ("2023-09-15T09:00:00Z"
for "9am in Lisbon" → "09:00"). A string that is a text the request quotes, retyped
with other punctuation or spacing ("orders[0]" for the quoted "orders[0", "too many
spaces" for "too    many     spaces"), becomes that text as the user wrote it: the tool
works on the user's text, not on the model's copy of it. So does a word the model
respelled ("Lisboa" for the request's "Lisbon", "Buddhist" for "Buddhism"). A sum that
is a part of the one sum the request writes becomes that sum ("17.5%" for "17.5% of
240"; a bare number too, for a parameter that takes arithmetic: "10" for "10
factorial"); a sum the model retyped in symbols goes to a parameter that takes
arithmetic in the request's own words ("8 percent of 2,500" for "8 * 2500"). A
conversion's two ends, swapped by the model, go the way the request states (the word
right after the request's quantity names the source: "1 terabyte in gigabytes"), and a
source the request never names becomes what it names there ("San Francisco" for the
description's "UTC" in "at 9:00 in San Francisco"). A part of a JSON document the
request writes goes to the tool as the whole document when another argument names a
key of the whole ("user.name" beside the object under "user").
Numbers written in words count as numbers ("twenty five" → 25, "three hundred and
fifty" → 350).

Two kinds of value are added, not by the model but from the request's own words, where
the tool's default would answer another question: :func:`named_members` sets an
optional ``enum`` the model left out to the one member the request names ("the data
size units" → ``category: data``, not every unit), and :func:`named_default` sets a
yard operation's naming default to the one name the request writes ("the current hour
in Istanbul" → ``zone: Istanbul``, not UTC).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from plugyard.llm.stated import (
    ISO_LETTERS,
    USER_JSON_TRIES,
    asked_in,
    clocks_in,
    dates_meant,
    fold,
    initials_in,
    initials_of,
    json_in,
    letters_of,
    names_in,
    numbers_in,
    percents_in,
    proper_names_in,
    quoted_in,
    spells_boolean,
    stem,
    words_in,
)

_CODE = re.compile(r"[(){}\[\]=<>*+^|;\\$]|\b(select|from|where)\b", re.IGNORECASE)
#: The words of a value's syntax rather than its content: a command's flags ("/F",
#: "-v", "--force") and a query's keys ("track:", "artist:" of "track:Dil Nu
#: artist:Maninder Buttar"). The tool's format asks for them, the request never states
#: them, and they are no invention.
_SYNTAX = re.compile(r"(?:(?<=\s)|^)(?:--?|/)[A-Za-z]{1,12}\b(?![/\w])|\b[A-Za-z_]\w*:(?!//)(?=\S)")
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
        "now": {"current", "currently", "moment"}, "m": {"meter"}, "mass": {"weight"},
    }.items()
}  # fmt: skip
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")
#: Currency codes and the names people write ("GBP" for "British pounds").
_CURRENCIES: Mapping[str, frozenset[str]] = {
    key: frozenset(values)
    for key, values in {
        "usd": {"dollar"}, "eur": {"euro"}, "gbp": {"sterling", "pound"}, "jpy": {"yen"},
        "cny": {"yuan", "renminbi"}, "rmb": {"yuan", "renminbi"}, "inr": {"rupee"},
        "chf": {"franc"}, "cad": {"canadian"}, "aud": {"australian"}, "nzd": {"zealand"},
        "hkd": {"hong"}, "sgd": {"singapore"}, "krw": {"won"}, "mxn": {"mexican", "peso"},
        "brl": {"real", "brazilian"}, "rub": {"ruble", "rouble"}, "zar": {"rand"},
        "try": {"lira"}, "sek": {"krona"}, "nok": {"krone"}, "dkk": {"krone"},
        "pln": {"zloty"}, "thb": {"baht"}, "aed": {"dirham"}, "sar": {"riyal"},
        "ils": {"shekel"}, "btc": {"bitcoin"}, "eth": {"ether", "ethereum"},
    }.items()
}  # fmt: skip
#: Countries and the adjectives people write ("Germany" for "German history").
_COUNTRIES: Mapping[str, frozenset[str]] = {
    key: frozenset(values)
    for key, values in {
        "germany": {"german"}, "france": {"french"}, "italy": {"italian"},
        "spain": {"spanish"}, "china": {"chinese"}, "japan": {"japanese"},
        "america": {"american"}, "usa": {"american"}, "us": {"american"},
        "britain": {"british"}, "uk": {"british"}, "england": {"english"},
        "russia": {"russian"}, "india": {"indian"}, "canada": {"canadian"},
        "mexico": {"mexican"}, "brazil": {"brazilian"}, "australia": {"australian"},
        "egypt": {"egyptian"}, "greece": {"greek"}, "turkey": {"turkish"},
        "korea": {"korean"}, "portugal": {"portuguese"}, "netherlands": {"dutch"},
        "holland": {"dutch"}, "sweden": {"swedish"}, "norway": {"norwegian"},
        "poland": {"polish"}, "ireland": {"irish"}, "scotland": {"scottish"},
        "israel": {"israeli"}, "iran": {"iranian"}, "vietnam": {"vietnamese"},
        "thailand": {"thai"}, "argentina": {"argentinian", "argentine"},
        "switzerland": {"swiss"}, "austria": {"austrian"}, "belgium": {"belgian"},
    }.items()
}  # fmt: skip
#: Names a value may be written by, beside the units': a currency's code, a country.
_ALIASES: Mapping[str, frozenset[str]] = {
    key: _CURRENCIES.get(key, frozenset()) | _COUNTRIES.get(key, frozenset())
    for key in {*_CURRENCIES, *_COUNTRIES}
}
#: Words too plain to ground a value, or to be an invention, on their own.
_PLAIN_WORDS = ("deg degree the a an of and or in on at to for by with from is are be all "
                "any default none null true false yes no")  # fmt: skip
_PLAIN = frozenset(_PLAIN_WORDS.split())
#: Short words of every sentence, which abbreviate nothing: the "me" of "tell me" is
#: not the symbol of "meter", nor the "so" of "so what" of "second".
_SHORT_WORDS = ("am as be but can did do doe get go got had has have he her him his how i "
                "if it its let may me my new no not now off old one our out own per put "
                "say see set she so than that them then they this too two up us use was "
                "way we were what when who why will you your")  # fmt: skip
_UNABBREVIATING = _PLAIN | frozenset(_SHORT_WORDS.split())
#: How the names of units end ("kilometre", "mebibyte", "milligram"), beside the names
#: :data:`_SYNONYMS` gives: what an abbreviation may stand for.
_UNIT_ENDINGS = ("meter", "gram", "liter", "byte", "bit", "second", "watt", "hertz",
                 "joule", "volt", "ampere", "pascal", "calorie", "tonne")  # fmt: skip
_UNIT_NAMES = frozenset().union(*_SYNONYMS.values()) - {"current", "currently", "moment"}


@dataclass(frozen=True, slots=True)
class Evidence:
    """What an argument may come from: the text, words and numbers of the request,
    earlier tool output, and today's date."""

    text: str
    numbers: frozenset[float]
    words: frozenset[str]
    stems: frozenset[str]
    #: The numbers the request gives as percentages ("17.5%"), for a parameter that
    #: takes a fraction.
    percents: frozenset[float] = frozenset()
    #: The words written with a capital ("California"), which a code in capitals
    #: ("CA") may abbreviate.
    names: frozenset[str] = frozenset()
    #: The initials of runs of words ("sd" of "San Diego", "ssn" of "social security
    #: number"), which a value of one word may be: see :func:`initials_in`.
    initials: frozenset[str] = frozenset()
    #: The words written all in capitals ("LA", "NYC"), whose words a name of several
    #: words ("Los Angeles") may spell.
    acronyms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, texts: Iterable[str], data: Iterable[Any] = (),
           today: dt.date | None = None) -> Evidence:  # fmt: skip
        said = list(texts)
        parts = said + [json.dumps(d, ensure_ascii=False, default=str) for d in data]
        numbers: set[float] = set()
        words: set[str] = set()
        names: set[str] = set()
        initials: set[str] = set()
        for part in parts:
            numbers |= numbers_in(part)
            words.update(words_in(part))
            names.update(names_in(part))
        acronyms: set[str] = set()
        for text in said:  # not a tool's output, whose every run of words would count
            initials |= initials_in(text)
            acronyms.update(a.lower() for a in _ACRONYM.findall(text))
        day = today or dt.date.today()
        for meant in {day}.union(*(dates_meant(text, day) for text in said)):
            numbers |= {float(meant.year), float(meant.month), float(meant.day)}
        return cls(
            f" {_folded(' '.join(parts))} ",
            frozenset(numbers),
            frozenset(words),
            frozenset(stem(w) for w in words),
            frozenset(p for part in said for p in percents_in(part)),
            frozenset(names),
            frozenset(initials),
            frozenset(acronyms),
        )

    def has_number(self, value: float) -> bool:
        value = abs(value)  # "-1" is read as its digits
        if value in self.numbers:
            return True
        return any(math.isclose(value, n, rel_tol=1e-9) for n in self.numbers)

    def has_text(self, value: str) -> bool:
        """Whether the request holds ``value`` as written, case, spacing and
        underscores ignored, as whole words."""
        folded = _folded(value).strip()
        if not folded:
            return False
        found = self.text.find(folded)
        while found >= 0:
            before, after = self.text[found - 1], self.text[found + len(folded)]
            if _bounded(before, folded[0]) and _bounded(after, folded[-1]):
                return True
            found = self.text.find(folded, found + 1)
        return False

    def has_word(self, word: str, *, abbreviated: bool = True, code: bool = False) -> bool:
        """Whether the evidence states ``word``, as written, with another ending, by a
        synonym or (with ``abbreviated``) as an abbreviation: of a unit either way ("km"
        and "kilometres"), or, for a ``code`` (a word written in capitals), of a name
        written with a capital ("CA" of "California")."""
        if word in self.words or stem(word) in self.stems:
            return True
        names = _SYNONYMS.get(word, frozenset()) | _ALIASES.get(word, frozenset())
        if names & self.words:
            return True
        if abbreviated and word in self.initials:
            return True
        abbreviated = abbreviated and word not in _UNABBREVIATING
        for known in self.words:
            if word in _SYNONYMS.get(known, ()) or word in _ALIASES.get(known, ()):
                return True
            if not abbreviated or known in _UNABBREVIATING:
                continue
            if _abbreviates(word, known) and (_unit(known) or (code and known in self.names)):
                return True
            if _abbreviates(known, word) and _unit(word):
                return True
        return False


#: Scripts written without spaces between words (Chinese, Japanese kana, Thai, Lao,
#: Khmer, Myanmar): there, a value is a run of characters inside a longer one, "广州市"
#: in "查一下中国广州市和北京市的天气".
_UNSPACED = re.compile(
    "[\u1000-\u109f\u0e00-\u0eff\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)


def _bounded(outside: str, edge: str) -> bool:
    """A match ends a word where the character ``outside`` it is no letter or digit,
    or where either it or the value's ``edge`` is of a script written without spaces."""
    return not outside.isalnum() or bool(_UNSPACED.match(outside) or _UNSPACED.match(edge))


def _folded(text: str) -> str:
    return re.sub(r"[_\s]+", " ", text.lower())


def _unit(word: str) -> bool:
    """``word`` names a unit: an abbreviation of it is its symbol ("km"). Any other short
    word whose letters fall in order in a word is no abbreviation of it (the "red" of
    "restocked"), unless it is a code in capitals for a name ("CA", "California")."""
    return word in _UNIT_NAMES or word.endswith(_UNIT_ENDINGS)


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
        """The argument it is in, as the call names it (the pointer's first token)."""
        return self.pointer.lstrip("/").split("/", 1)[0].replace("~1", "/").replace("~0", "~")


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
    # Built only for a word the request does not write as the model did (_as_spelled).
    evidence = functools.cache(lambda: Evidence.of(texts))
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        sub = props.get(name)
        out[name] = _normal(value, sub if isinstance(sub, Mapping) else {}, said, evidence)
    return _directed(_as_whole_documents(out, said), said, evidence)


def named_members(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], texts: Sequence[str]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``arguments`` with each optional parameter the model left out filled with the one
    member of its ``enum`` (or its items' ``enum``, as a list of that member) that the
    request names in its own words and no argument holds, and the names so filled.
    "Show me all the data size units you know" asks for ``category: data``: left out, the
    tool lists every unit. The words count outside the texts the request quotes and the
    JSON it writes (what it works on, not what it asks); a member of fewer than three
    letters, or one too plain to name anything ("all", "default"), is never named."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return dict(arguments), ()
    required = set(_strings(schema.get("required")))
    open_ = [n for n in properties if n not in arguments and n not in required]
    if not open_:
        return dict(arguments), ()
    held = {stem(w) for v in arguments.values() for s in _texts_of(v) for w in words_in(s)}
    free = {stem(w) for t in texts for w in words_in(asked_in(t))}
    free -= held
    out, filled = dict(arguments), []
    for name in open_:
        spec = properties[name]
        if not isinstance(spec, Mapping) or "const" in spec:
            continue
        items = spec.get("items") if spec.get("type") == "array" else None
        enum = (items if isinstance(items, Mapping) else spec).get("enum")
        if not isinstance(enum, list):
            continue
        found = [m for m in enum if isinstance(m, str) and _names_member(m, free)]
        if len(found) == 1 and spec.get("default") != found[0]:
            out[name] = [found[0]] if items is not None else found[0]
            filled.append(name)
    return out, tuple(filled)


#: A default that names something (UTC, English), which a name the request gives
#: replaces; not a pattern or a path ("**/*", ".").
_NAMING_DEFAULT = re.compile(r"[A-Za-z][A-Za-z _/-]*")


def named_default(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], texts: Sequence[str]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``arguments`` with the one optional text parameter the model left out whose
    default names something, set to the one name the request writes (a capitalised word
    or run of them inside a sentence, outside its quotes) that no argument holds, and
    the names so filled. "Tell me the current hour in Istanbul" came back as ``now {}``
    and was answered for the default zone, UTC: the default answers only a request that
    names nothing for it. With two such parameters open, or two names left, nothing is
    set."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return dict(arguments), ()
    required = set(_strings(schema.get("required")))
    open_ = [
        name
        for name, spec in properties.items()
        if name not in arguments
        and name not in required
        and isinstance(spec, Mapping)
        and spec.get("type") == "string"
        and isinstance(spec.get("default"), str)
        and _NAMING_DEFAULT.fullmatch(spec["default"]) is not None
        and not any(key in spec for key in ("enum", "const", "format", "pattern"))
    ]
    if len(open_) != 1:
        return dict(arguments), ()
    held = {w for v in arguments.values() for s in _texts_of(v) for w in words_in(s)}
    names = [
        name
        for text in texts
        for name in proper_names_in(asked_in(text))
        if not set(words_in(name)) & held
    ]
    if len(set(names)) != 1:
        return dict(arguments), ()
    return {**arguments, open_[0]: names[0]}, (open_[0],)


def _names_member(member: str, free: set[str]) -> bool:
    """Each word of ``member`` is a word of ``free`` or has a synonym there ("weight"
    for ``mass``)."""
    words = [stem(w) for w in words_in(member)]
    return bool(words) and all(
        len(w) >= 3 and w not in _PLAIN and (w in free or _SYNONYMS.get(w, frozenset()) & free)
        for w in words
    )


def _texts_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _texts_of(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _texts_of(v)]
    return []


#: Words that name the two ends of a conversion in a parameter's name: ``from_unit``
#: and ``to_unit``, ``source_language`` and ``target_language``, ``from`` and ``to``.
_FROM_WORDS = frozenset({"from", "source", "src", "origin", "input", "base"})
_TO_WORDS = frozenset({"to", "target", "dst", "destination", "output", "into"})
#: Words that may stand between a quantity and what it is counted in: "9 am in
#: Lisbon", "72 degrees Fahrenheit", "noon at Tokyo".
_BETWEEN = frozenset({"am", "pm", "a", "m", "degree", "deg", "in", "at", "o", "clock",
                      "of", "the", "local"})  # fmt: skip
_SPAN = re.compile(r"[^\s,;?!()]+")


def _directed(
    arguments: dict[str, Any], said: str, evidence: Callable[[], Evidence]
) -> dict[str, Any]:
    """``arguments`` with a conversion's two ends the way the request states them.

    A small model swaps them ("what is 1 terabyte in gigabytes" as gigabytes to
    terabytes). The request's quantity says which end is the source: the call's number
    or time of day stands right before what it is counted in ("1 terabyte", "9am in
    Lisbon", "how many metres in 3 miles"). When the word after the quantity names
    the call's target and not its source, the two are swapped; when it names neither,
    or a "to"/"from" comes first, the call is left as it is. A source the request does
    not name at all (the description's "UTC" for "at 9:00 in San Francisco") becomes
    what the request names right after the quantity, when that is not the target.
    """
    for source, target in _ends(arguments):
        first, second = arguments[source], arguments[target]
        if not isinstance(first, str) or not isinstance(second, str) or first == second:
            continue
        quantities = _quantities(arguments, (source, target))
        if not _names(evidence(), first):
            placed = _placed_after(said, quantities)
            if placed and not _names(Evidence.of([placed], today=dt.date.min), second):
                arguments = {**arguments, source: placed}
            continue
        named = _named_after(said, quantities, first, second)
        if named == second:
            arguments = {**arguments, source: second, target: first}
    return arguments


def _placed_after(said: str, quantities: set[float]) -> str | None:
    """What the request names right after one of ``quantities``, past words such as
    "am", "in", "at": a name of capitalised words ("San Francisco") or a unit's word
    ("miles"); ``None`` when the quantity ends a sentence or no quantity is found."""
    spans = _SPAN.findall(said)
    for index, span in enumerate(spans):
        if not quantities or not numbers_in(span) & quantities or span.endswith("."):
            continue
        rest = spans[index + 1 :]
        while rest and words_in(rest[0]) and all(w in _BETWEEN for w in words_in(rest[0])):
            rest = rest[1:]
        if not rest or not rest[0][0].isalpha():
            return None
        taken = [rest[0]]
        if not rest[0][0].isupper():  # a word in lower case only as a unit: "3 miles"
            words = words_in(rest[0])
            return rest[0].rstrip(".") if words and all(map(_unit, words)) else None
        for word in rest[1:]:
            if taken[-1].endswith(".") or not word[0].isupper():
                break
            taken.append(word)
        return " ".join(taken).rstrip(".")
    return None


def _ends(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Pairs of argument names that are a conversion's source and target."""
    words = {name: words_in(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)) for name in arguments}
    pairs = []
    for source, these in words.items():
        ends = [w for w in these if w in _FROM_WORDS]
        if len(ends) != 1:
            continue
        rest = [w for w in these if w != ends[0]]
        for target, those in words.items():
            to = [w for w in those if w in _TO_WORDS]
            if len(to) == 1 and [w for w in those if w != to[0]] == rest:
                pairs.append((source, target))
    return pairs


_CLOCK_FIRST = re.compile(r"\d{1,2}:\d{2}(:\d{2})?(?![\d:])")


def _quantities(arguments: Mapping[str, Any], ends: tuple[str, str]) -> set[float]:
    """The numbers of the call's other values: an amount, or a time of day."""
    found: set[float] = set()
    for name, value in arguments.items():
        if name in ends or isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            found.add(float(value))
        elif isinstance(value, str) and (clock := _CLOCK_FIRST.match(value)):
            found |= numbers_in(clock.group())  # "9:30", or "9:30 am Berlin" as written
    return found


def _named_after(said: str, quantities: set[float], first: str, second: str) -> str | None:
    """Which of ``first`` and ``second`` the request names right after one of its
    ``quantities`` (the first such quantity that names one), else ``None``."""
    if not quantities:
        return None
    spans = _SPAN.findall(said)
    for index, span in enumerate(spans):
        if not numbers_in(span) & quantities:
            continue
        for word in spans[index + 1 : index + 5]:
            said_here = Evidence.of([word], today=dt.date.min)
            names = [v for v in (first, second) if _names(said_here, v)]
            if len(names) == 1:
                return names[0]
            folded = words_in(word)
            if names or not folded or not all(w in _BETWEEN for w in folded):
                break  # both, or a word that is not the quantity's unit or place
    return None


def _names(said: Evidence, value: str) -> bool:
    """Whether one word of the request names ``value``: one of its words ("Tokyo" of
    "Asia/Tokyo"), by a synonym or as a unit's abbreviation ("TB" of "terabyte")."""
    words = [w for w in words_in(value) if w not in _PLAIN]
    return bool(words) and any(said.has_word(w) for w in words)


def _normal(
    value: Any, schema: Mapping[str, Any], said: str, evidence: Callable[[], Evidence]
) -> Any:
    if not isinstance(value, str):
        return value
    enum = schema.get("enum")
    if isinstance(enum, list) and not _declared(value, schema, members=True):
        return _enum_member(value, [e for e in enum if isinstance(e, str)])
    if takes_clock(schema):
        return _clock(value, said)
    quoted = _as_quoted(value, said)
    if quoted == value:
        quoted = _as_written(value, said)
    if quoted != value:
        return quoted
    arithmetic = _takes_sum(schema)
    summed = _as_whole_sum(value, said, arithmetic)
    if summed == value and arithmetic:
        summed = _as_worded_sum(value, said)
    return summed if summed != value else _as_spelled(value, said, evidence)


#: How alike a word the model wrote and a word of the request must be to be one word
#: spelled two ways (difflib's ratio): "Lisboa" and "Lisbon" 0.83, "Buddhist" and
#: "Buddhism" 0.88; "Paris" and "Prague" (0.55) are two.
_RESPELLED = 0.8
_LETTERS = re.compile(r"[^\W\d_]+")


def _as_spelled(value: str, said: str, evidence: Callable[[], Evidence]) -> str:
    """``value`` with each word the model respelled written as the request writes it:
    "Lisboa" → "Lisbon", "Europe/Lisboa" → "Europe/Lisbon", "Buddhist" → "Buddhism". Only
    a name of up to four words, each word of five letters or more that the request does
    not state in any form (:meth:`Evidence.has_word`), and only when exactly one word of
    the request is that alike: the tool gets the user's word, not the model's variant."""
    if len(words_in(value)) > 4 or any(c.isdigit() for c in value):
        return value
    request = {w.lower(): w for w in _LETTERS.findall(said) if len(w) >= 5}

    def spelled(found: re.Match[str]) -> str:
        word = found.group()
        low = word.lower()
        if len(low) < 5 or low in request or evidence().has_word(fold(low), abbreviated=False):
            return word
        near = {
            written
            for known, written in request.items()
            if known[0] == low[0] and SequenceMatcher(None, low, known).ratio() >= _RESPELLED
        }
        return near.pop() if len(near) == 1 else word

    return _LETTERS.sub(spelled, value)


#: Words that do arithmetic ("of" as in "17.5% of 240").
_ARITHMETIC = (r"plus|minus|times|multiplied|divided|of|squared|cubed|factorial|power|mod"
               r"|modulo|square|cube|root|sqrt|remainder|quotient|log|logarithm|ln")  # fmt: skip
#: Words that stand between a sum's numbers, so neither begin nor end one ("the
#: remainder when 1000 is divided by 7", "log base 10 of 1000", "18 percent on a 62.50
#: check").
_JOINING = (r"by|over|of|to|the|power|mod|modulo|plus|minus|times|multiplied|divided"
            r"|base|when|after|is|on|a")  # fmt: skip
#: What a sum is written with: numbers, operators, brackets and those words ("17.5% of
#: 240", "(3 + 4) * 12 / 7", "2 to the power of 10", "the remainder of 100 divided by 7").
_SUM_PART = (
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?|[-+*/^×÷%()!]"
    rf"|\b(?:{_ARITHMETIC}|{_JOINING}|percent)\b"
)
_SUM = re.compile(rf"(?:{_SUM_PART})(?:\s*(?:{_SUM_PART}))*", re.IGNORECASE)
_SUM_EDGE = re.compile(rf"^(?:(?:{_JOINING})\b\s*)+|(?:\s*\b(?:{_JOINING}))+$", re.IGNORECASE)
#: What makes a text a sum rather than a number: an operator, a bracket, a percent sign
#: or a word that does arithmetic.
_OPERATOR = re.compile(rf"\s[-+*/^×÷]\s|\d[+*/^×÷]\d|[()%!]|\b({_ARITHMETIC}|percent)\b",
                       re.IGNORECASE)  # fmt: skip
_DATE_LIKE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d+-\d+-\d+")
_SUM_TAKER = re.compile(r"\b(expression|formula|arithmetic|equation|calculation)s?\b", re.I)


#: The names an expression selects by: a word that is not a function's name.
_SELECTED = re.compile(r"(?<![\w`'\"])[A-Za-z_]\w*(?![\w`'\"]|\s*\()")


def is_code(value: str) -> bool:
    """The value is written as code (an expression, a query, a pattern): its numbers
    are what a model can invent, its words its syntax."""
    return _CODE.search(value) is not None


def _takes_sum(schema: Mapping[str, Any]) -> bool:
    """The parameter takes arithmetic: its description says so."""
    return _described_as(schema, _SUM_TAKER)


def _described_as(schema: Mapping[str, Any], words: re.Pattern[str]) -> bool:
    described = schema.get("description")
    return isinstance(described, str) and words.search(described) is not None


def _as_whole_sum(value: str, said: str, arithmetic: bool) -> str:
    """The one sum the request writes that ``value`` is a proper part of: "17.5%" for
    "What is 17.5% of 240?", "3 + 4" for "(3 + 4) * 12 / 7", and, for a parameter that
    takes arithmetic, "10" for "What is 10 factorial?". A small model copies the first
    part of the user's arithmetic and leaves out the rest, which no check of its values
    can see: each is in the request. Elsewhere only a value that is a sum itself is
    widened, so a number stays a number."""
    if _DATE_LIKE.search(value) or not (arithmetic or _OPERATOR.search(f" {value} ")):
        return value
    part = _sum_tokens(value)
    if part is None:
        return value
    part = _spoken(part)
    wholes = set()
    for whole in sums_in(said):
        tokens = _spoken(_sum_tokens(whole) or [])
        if len(part) < len(tokens) and _inside(part, tokens):
            wholes.add(whole)
    return wholes.pop() if len(wholes) == 1 else value


_SUM_TOKEN = re.compile(_SUM_PART, re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"\d")
_WORD_TOKEN = re.compile(rf"^(?:{_ARITHMETIC}|percent)$", re.IGNORECASE)


#: A parameter that takes arithmetic and nothing else: "an arithmetic expression", not
#: json-query's "The expression to check".
_ARITHMETIC_TAKER = re.compile(
    r"\b(arithmetic|mathematical|math|calculation|equation|formula)s?\b", re.IGNORECASE
)


def takes_arithmetic(schema: Mapping[str, Any]) -> bool:
    """The parameter's description says it takes arithmetic, in so many words."""
    return _described_as(schema, _ARITHMETIC_TAKER)


def sums_in(said: str) -> list[str]:
    """The sums ``said`` writes, as written, each once: "17.5% of 240", "(3 + 4) * 12 /
    7", "18 percent on a 62.50"."""
    found = []
    for match in _SUM.finditer(said):
        whole = _SUM_EDGE.sub("", match.group()).strip()
        if _OPERATOR.search(f" {whole} ") and not _DATE_LIKE.search(whole):
            found.append(whole)
    return list(dict.fromkeys(found))


def _as_worded_sum(value: str, said: str) -> str:
    """The one sum the request writes in words with the numbers of ``value``, in their
    order, where ``value`` writes it in symbols alone: "8 percent of 2,500" for "8 *
    2500". A parameter that takes arithmetic reads the words itself, and a small model
    retyping them into symbols chose the wrong one ("percent of" as a product); where it
    chose right the two read alike."""
    tokens = _sum_tokens(value)
    if tokens is None or any(t.isalpha() for t in tokens):
        return value
    numbers = [_plain(t) for t in tokens if _NUMBER_TOKEN.search(t)]
    wholes = set()
    for whole in sums_in(said):  # a word token below is an operator sums_in asks for
        written = _sum_tokens(whole) or []
        if [_plain(t) for t in written if _NUMBER_TOKEN.search(t)] == numbers and any(
            _WORD_TOKEN.match(t) for t in written
        ):
            wholes.add(whole)
    return wholes.pop() if len(wholes) == 1 else value


def _spoken(tokens: list[str]) -> list[str]:
    """``tokens`` with a percentage written with its sign said as a word: "18%" is "18
    percent", so the model's "18%" is a part of "18 percent on a 62.50"."""
    out: list[str] = []
    for token in tokens:
        out += [token[:-1], "percent"] if len(token) > 1 and token.endswith("%") else [token]
    return out


def _plain(token: str) -> str:
    """A number token as its digits: "2,500" and "2500", "8%" and "8" alike."""
    return token.replace(",", "").rstrip("%")


def _sum_tokens(text: str) -> list[str] | None:
    """The numbers, operators and words of a text written only with them, else ``None``."""
    tokens = [t.lower() for t in _SUM_TOKEN.findall(text)]
    return tokens if tokens and "".join(tokens) == re.sub(r"\s+", "", text).lower() else None


def _inside(part: list[str], whole: list[str]) -> bool:
    """``part`` is a run of ``whole``'s tokens: "2 + 3" is not inside "12 + 3"."""
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def _as_whole_documents(arguments: dict[str, Any], said: str) -> dict[str, Any]:
    """``arguments`` with a part of a JSON document the request writes widened to the
    whole document, when another argument names a key of the whole that the part does
    not hold: ``{"user": {"name": "Ana"}}`` for ``{"name": "Ana"}`` beside the
    expression ``user.name``. The user's query names its path from the top, and a small
    model handed the tool the part the path leads to, so the query found nothing; a part
    with a query written for it (``length(@)`` over the list) is left as it is."""
    documents: list[Any] | None = None
    for name, value in arguments.items():
        if not isinstance(value, dict | list) or not value:
            continue
        if documents is None:
            documents = list(json_in(said, tries=USER_JSON_TRIES))
        wholes = [d for d in documents if d != value and _holds(d, value)]
        if len(wholes) != 1 or not isinstance(wholes[0], dict):
            continue
        own = set(value) if isinstance(value, dict) else set()
        keys = {k for k in wholes[0] if isinstance(k, str) and k not in own}
        named = {w for other, v in arguments.items() if other != name and isinstance(v, str)
                 for w in re.findall(r"[A-Za-z_][\w]*", v)}  # fmt: skip
        if keys & named:
            arguments = {**arguments, name: wholes[0]}
    return arguments


def _holds(document: Any, part: Any) -> bool:
    """``part`` is a value nested somewhere inside ``document`` (walked without
    recursion: a request may nest as deep as the JSON decoder allows)."""
    stack = [document]
    while stack:
        node = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            for child in children:
                if child == part:
                    return True
                stack.append(child)
    return False


def _as_quoted(value: str, said: str) -> str:
    """The one quoted text of ``said`` that ``value`` retypes: the same letters and
    digits in the same order and case, with other punctuation or spacing."""
    letters = letters_of(value)
    if not letters:
        return value
    quoted = quoted_in(said)
    if value in quoted:
        return value
    found = [q for q in quoted if letters_of(q) == letters]
    return found[0] if len(found) == 1 else value


_OPENING, _CLOSING = '"“‘«', '"”’»'


def _as_written(value: str, said: str) -> str:
    """The one run of ``said``'s own text that ``value`` retypes with other quote marks,
    a text of two words or more: the same letters and digits in the same order and case.
    A small model drops what it takes for its own syntax: asked to straighten the
    quotes in “Don’t panic,” she said, it sent "Don’t panic, she said". A closing quote
    inside the run takes its opening quote along, and the reverse."""
    letters = letters_of(value)
    if len(value.split()) < 2 or len(letters) < 8 or value in said:
        return value
    places = [i for i, c in enumerate(said) if c.isalnum()]
    written = "".join(said[i] for i in places)
    found = written.find(letters)
    if found < 0 or written.find(letters, found + 1) >= 0:
        return value
    start, end = places[found], places[found + len(letters) - 1] + 1
    run = said[start:end]
    closes = sum(run.count(c) for c in _CLOSING if c not in _OPENING)
    opens = sum(run.count(c) for c in _OPENING if c not in _CLOSING)
    if start > 0 and said[start - 1] in _OPENING and closes > opens:
        start -= 1
    if end < len(said) and said[end] in _CLOSING and opens > closes:
        end += 1
    run = said[start:end]
    # Only quote marks are restored: a comma the model added ("New York, NY") is the
    # form a client's tool may want.
    quotes = set(_OPENING + _CLOSING)
    if sorted(c for c in run if c in quotes) == sorted(c for c in value if c in quotes):
        return value
    return run


def _enum_member(value: str, members: Sequence[str]) -> str:
    """The one member that ``value`` names ("feet" → "ft"), else ``value``."""
    said = frozenset(words_in(value))
    named = Evidence(" ", frozenset(), said, frozenset(stem(w) for w in said))
    # A member that is the value's word or its symbol first ("fahrenheit" → "°F"), then
    # one that abbreviates it ("kilometres" → "km").
    exact = [m for m in members if (w := words_in(m)) and all(
        x in said or _SYNONYMS.get(x, frozenset()) & said for x in w)]  # fmt: skip
    found = exact or [
        m for m in members if (w := words_in(m)) and all(named.has_word(x) for x in w)
    ]
    return found[0] if len(found) == 1 else value


def takes_clock(schema: Mapping[str, Any]) -> bool:
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
    if _AMPM.match(value) is not None:  # the whole value is one twelve-hour time
        clocks = clocks_in(value)
        return clocks[0] if clocks else value
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
    """The argument values that are not grounded, in argument order (see the module's
    notes for what a required and an optional value need). ``described`` is the
    operation's description and examples, named in the reason when a value comes from
    there."""
    required = set(_strings(schema.get("required")))
    found: list[Ungrounded] = []
    for name, value in arguments.items():
        found += _check(f"/{_escape(name)}", value, _field(schema, name), evidence, described,
                        name in required)  # fmt: skip
    for name in sorted(required - set(arguments)):
        if "default" not in _field(schema, name):
            found.append(Ungrounded(f"/{_escape(name)}", None, "it is missing", True))
    return tuple(found)


def stated(value: Any, schema: Mapping[str, Any], evidence: Evidence) -> bool:
    """Whether ``value`` would be kept as an optional argument under ``schema``: the
    evidence states it, or it is the schema's default or const."""
    return not _check("", value, schema, evidence, "", False)


def _check(pointer: str, value: Any, schema: Mapping[str, Any], evidence: Evidence,
           described: str, required: bool) -> list[Ungrounded]:  # fmt: skip
    if _declared(value, schema, members=required):
        return []
    if not required and _empty(value):
        return [Ungrounded(pointer, value, "it states nothing", False)]
    if isinstance(value, Mapping):
        out: list[Ungrounded] = []
        for key, item in value.items():
            out += _check(f"{pointer}/{_escape(str(key))}", item, _field(schema, str(key)),
                          evidence, described, required)  # fmt: skip
        return out
    if isinstance(value, list):
        items = schema.get("items")
        sub = items if isinstance(items, Mapping) else {}
        out = []
        for index, item in enumerate(value):
            out += _check(f"{pointer}/{index}", item, sub, evidence, described, required)
        return out
    reason = _why(value, evidence, plain=required)
    if reason is None and isinstance(value, str) and takes_clock(schema):
        reason = _other_clock(value, evidence)
    if reason is None and isinstance(value, str) and is_code(value):
        reason = _copied_expression(value, evidence, described)
    if reason is None:
        return []
    if described and _from(value, described):
        reason += " (it is an example from the tool's description)"
    return [Ungrounded(pointer, value, reason, required)]


def _copied_expression(value: str, evidence: Evidence, described: str) -> str | None:
    """Why an expression is the description's and not the request's. Its numbers may
    be the request's ("above 100") while the whole is the description's: the 0.5B
    model sent json-query's own example, "orders[?total > `100`].id.", for a request
    about sales. Its functions are the language's words; the names it selects by must
    be the request's."""
    if not described or evidence.has_text(value) or not _from(value, described):
        return None
    names = [n for n in _SELECTED.findall(value) if not evidence.has_word(n.lower())]
    return f"{names[0]!r} of {_cut(value)!r} does not appear in the request" if names else None


def _other_clock(value: str, evidence: Evidence) -> str | None:
    """Why a time of day is not one the request states, where it states some: its hour
    and minutes may each be stated ("quarter past 3 pm" states 3 pm's 15 and a
    quarter's 15) while the time is not (the 0.5B model wrote 15:00 for it)."""
    own, stated = clocks_in(value), clocks_in(evidence.text)
    if not own or not stated or own[0] in stated:
        return None
    return f"{value!r} is not a time the request states ({', '.join(stated)})"


def _why(value: Any, evidence: Evidence, *, plain: bool) -> str | None:
    """Why ``value`` is not grounded, or ``None`` when it is. ``plain``: a value too
    plain to be an invention (0, 1, only common words) counts as grounded."""
    if value is None or isinstance(value, bool) or spells_boolean(value):
        return None
    if isinstance(value, int | float):
        if (plain and abs(value) in (0, 1)) or evidence.has_number(float(value)):
            return None
        return f"{_show(value)} does not appear in the request"
    if not isinstance(value, str) or evidence.has_text(value):
        return None
    # The numbers as written: "%" in a value may be a remainder ("100 % 7").
    numbers = numbers_in(value, readings=False)
    # 0 is the "00" of "15:00"; 1 counts only where 1 alone would ("Mission 1" is how a
    # small model fills an optional name nobody gave).
    free = (0.0, 1.0) if plain else (0.0,)
    missing = sorted(n for n in numbers if n not in free and not evidence.has_number(n))
    if missing:
        return f"{_show(missing[0])} in {value!r} does not appear in the request"
    if is_code(value):
        return None  # an expression or a query: its numbers are what a model can invent
    words = [w for w in words_in(_SYNTAX.sub(" ", ISO_LETTERS.sub(" ", value))) if w not in _PLAIN]
    if not words:
        if plain or numbers:
            return None
        return f"{value!r} states nothing the request does"
    if 2 <= len(words) <= 5 and initials_of(value) in evidence.acronyms:
        return None  # "Los Angeles" for the "LA" of "How's the weather in LA?"
    # Only a one-word value may be an abbreviation: the "CA" of "Berkeley, CA" is not
    # grounded by the "can" of "Can you tell me…".
    single, code = len(words) == 1, value.strip().isupper()
    grounded = sum(1 for w in words if evidence.has_word(w, abbreviated=single, code=code))
    if len(words) <= 4:
        return None if grounded else f"{value!r} does not appear in the request"
    if grounded * 4 >= len(words) * 3:
        return None
    new = len(words) - grounded
    return f"{new} of the {len(words)} words of {_cut(value)!r} do not appear in the request"


def _declared(value: Any, schema: Mapping[str, Any], *, members: bool) -> bool:
    """The value is the schema's default or const, or (with ``members``) one of its enum
    values."""
    if "default" in schema and schema["default"] == value:
        return True
    if "const" in schema and schema["const"] == value:
        return True
    enum = schema.get("enum")
    if members and isinstance(enum, list):
        if value in enum:
            return True
        if isinstance(value, str):
            return value.strip().lower() in {str(e).lower() for e in enum}
    return False


def _empty(value: Any) -> bool:
    return (isinstance(value, str) and not value.strip()) or (
        isinstance(value, list | Mapping) and not value
    )


def _field(schema: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    properties = schema.get("properties")
    sub = properties.get(name) if isinstance(properties, Mapping) else None
    return sub if isinstance(sub, Mapping) else {}


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
