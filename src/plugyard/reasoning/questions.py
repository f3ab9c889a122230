"""What a question asks for, and where a text says it: the question's kind (a date, a
measure, a place, a person, yes or no), the form its answer must take ("a single word",
"Yes or No"), its key terms and entities, the parts of a compound question — and the
spans of a sentence that are of the kind asked for, and a BM25 ranking of sentences.

Pure functions over text, shared by the bundled KB, goal-solver and validation plugins
and by the decomposer, so that retrieval, answering and checking read a question the
same way.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["date", "measure", "place", "person", "yesno", "other"]
Form = Literal["word", "yesno", "free"]

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|St|Sr|Jr|Prof|Gen|Col|Capt|Lt|Sgt|Rev|Mt|No|vs|etc|e\.g|i\.e"
    r"|[A-Z])\.$"
)
_LISTED = re.compile(r"\s*(?:Q|Question)\s*\d+\s*[:.)]", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])[\"'”)\]]?\s+(?=[\"'“(\[]?[A-Z0-9])")
_STOP = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
        "do", "does", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how",
        "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
        "our", "she", "so", "such", "than", "that", "the", "their", "them", "then", "there",
        "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "where",
        "which", "who", "whom", "whose", "why", "will", "with", "would", "you", "your", "yes",
        "tell", "explain", "describe", "give", "list", "please", "about", "answer", "single",
        "word", "one", "only", "name", "much", "many", "any", "some", "also", "just",
        "anyone", "anything", "someone", "something", "everyone", "ever", "still", "through",
    )
)  # fmt: skip
#: Words a question and the sentence that answers it often say differently, by stem.
_RELATED = (
    ("tall", "high", "height", "stand", "metr", "meter", "feet", "foot"),
    ("finish", "complet", "built", "build", "construct", "open", "inaugurat", "end"),
    ("begin", "began", "start", "found", "establish", "creat", "launch"),
    ("born", "birth"),
    ("die", "died", "death", "dead"),
    ("cost", "price", "paid", "pay", "worth", "spent"),
    ("weigh", "weight", "mass", "tonn", "kilogram"),
    ("long", "length"),
    ("far", "distance", "kilometr", "mile", "away"),
    ("wide", "width", "broad"),
    ("deep", "depth"),
    ("old", "age", "aged"),
    ("writ", "wrote", "written", "author"),
    ("invent", "inventor", "devis"),
    ("locat", "situat", "lie", "lies"),
    ("live", "lived", "resid", "inhabit"),
    ("larg", "big", "size", "area"),
    ("population", "inhabitant", "resident", "people"),
    ("fast", "speed"),
    ("lead", "led", "leader", "head", "command"),
    ("win", "won", "winner"),
    ("discover", "discovered", "found", "unearth"),
    ("buy", "bought", "sell", "sold", "purchas", "acquir"),
    ("die", "death"),
    ("design", "architect", "plan"),
)
_IRREGULAR = {
    "built": "build", "wrote": "writ", "written": "writ", "began": "begin", "begun": "begin",
    "led": "lead", "won": "win", "paid": "pay", "spent": "spend", "grew": "grow",
    "grown": "grow", "stood": "stand", "taught": "teach", "bought": "buy", "sold": "sell",
    "held": "hold", "made": "make", "ran": "run", "went": "go", "gone": "go",
    "metres": "metr", "meters": "metr", "metre": "metr", "meter": "metr",
}  # fmt: skip
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\.?,?\s+\d{{3,4}}"
    rf"|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{3,4}}"
    rf"|(?:{_MONTHS})\s+\d{{3,4}}"
    r"|(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\s+century(?:\s+(?:BC|BCE|AD|CE))?"
    r"|\d{3,4}s"
    r"|\d{1,4}\s+(?:BC|BCE|AD|CE)\b"
    r"|(?<![\d.,])(?:1[0-9]{3}|20[0-9]{2})(?![\d.,]\d))",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    "|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    "|eighty|ninety|hundred|a hundred|a thousand|a million|dozen|a dozen|half"
)
#: Words that qualify a unit rather than being one: "22 nautical miles".
_QUALIFIERS = "nautical|square|cubic|light|metric|short|long|imperial|million|billion"
_SPELLED = "|".join(sorted(_NUMBER_WORDS.split("|"), key=len, reverse=True))
_NUMBER = (
    rf"(?:[$€£]\s?)?(?:\d[\d,]*(?:\.\d+)?|(?:{_SPELLED})(?![a-zA-Z]))"
    r"(?:\s+(?:million|billion|thousand|hundred))?"
)
_MEASURE = re.compile(
    rf"\b{_NUMBER}(?:\s*(?:%|per\s?cent|percent)"
    rf"|\s*(?:-|\s)?(?:(?:{_QUALIFIERS})\s+)?(?:[a-zA-Z][a-zA-Z'-]*)"
    r"(?:\s+(?:per|an?|each)\s+[a-z]+|\s+(?!(?:and|or|but|the|of|in|on|at|to|by|for|was|were"
    r"|is|are|with|from|than|when|while|after|before|away|long|high|tall|wide|deep)\b)[a-z]{3,}s\b)?)?",
    re.IGNORECASE,
)
#: A time said without a date: "a month after the bridge opened", "in the spring".
_WHEN = re.compile(
    rf"\b(?:{_MONTHS}|spring|summer|autumn|winter|century|decade|ago|later|earlier|"
    r"(?:days?|weeks?|months?|years?|decades?)\s+(?:after|before|later|earlier))\b",
    re.IGNORECASE,
)
_LENGTH = r"metres?|meters?|m|km|kilometres?|kilometers?|miles?|feet|foot|ft|inches|cm|yards?"
_TIME = r"years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|centuries"
_WEIGHT = r"kilograms?|kg|tonnes?|tons?|pounds?|lbs?|grams?|g"
#: The units a "how tall / how far / how heavy …" answer is given in.
_UNITS = {
    unit: re.compile(rf"\b(?:{units})\b", re.IGNORECASE)
    for unit, units in (
        ("tall", _LENGTH), ("high", _LENGTH), ("far", _LENGTH), ("deep", _LENGTH),
        ("wide", _LENGTH), ("long", f"{_LENGTH}|{_TIME}"), ("old", _TIME),
        ("often", r"times?|once|twice|every|daily|weekly|yearly|annually"),
        ("heavy", _WEIGHT), ("fast", r"per|an hour|km/h|mph|knots?"),
    )
}  # fmt: skip
_UNITLESS = frozenset(("and", "or", "the", "of", "in", "on", "at", "to", "by", "for", "was"))
_TITLES = (
    "Dr", "Dr.", "Mr", "Mr.", "Mrs", "Mrs.", "Ms", "Ms.", "Sir", "Lady", "Lord", "King",
    "Queen", "Prince", "Princess", "Saint", "St.", "Commander", "Captain", "General",
    "President", "Professor", "Prof.", "Emperor", "Pope", "Chief",
)  # fmt: skip
_TITLE_WORDS = frozenset(t.rstrip(".") for t in _TITLES)
_NAME = r"[A-Z][\w'’-]*(?:[-][A-Z0-9][\w'’-]*)?"
_TITLE = "|".join(re.escape(t) for t in _TITLES)
_PROPER = re.compile(
    rf"\b(?:(?:{_TITLE})\s+)?{_NAME}(?:\s+(?:(?:de|van|von|da|del|la|le|of|the)\s+)?{_NAME})*"
)
_PLACE = re.compile(
    rf"\b(?:in|at|near|from|to|into|on|across|outside|inside|beside|off)\s+"
    rf"((?:the\s+)?{_NAME}(?:\s+(?:of\s+(?:the\s+)?)?{_NAME})*)"
)
#: "Which river", "what city": the kind of thing asked for, named beside its noun.
_WHICH = re.compile(r"\b(?:which|what)\s+([a-z]+)\b")
_PLACE_NOUNS = (
    "city|country|town|village|place|region|continent|river|lake|mountain|island|port|"
    "county|state|street|sea|ocean|valley|harbour|harbor|bay|capital|district|province"
)
#: A name ending in one of these is an organisation or a place, never who was asked for
#: (words that are also surnames — Court, Bank, Bay, Lake, Street — are left out).
_BODY = re.compile(
    r"\b(?:Syndicate|Company|Corporation|Corp|Inc|Ltd|Council|Society|Institute|University|"
    r"College|School|Empire|Republic|Kingdom|Ministry|Agency|Church|Army|Navy|Union|League|"
    r"Federation|Committee|Parliament|Senate|Department|Foundation|Association|Guild|"
    r"Alliance|Desert|City|Mountains?|Ocean|Island|Valley|Abyss|Galaxy)(?:'s|’s)?$"
)
#: "prioritise A over B", "choose A rather than B": a question that weighs two things.
_PREFER = re.compile(
    r"\b(?:prioriti[sz]e|prefer|choose|favou?r)\b(.+?)"
    r"\b(?:over|rather than|instead of|above)\b(.+?)(?:[?.]|$)",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nothing|cannot|can't|won't|didn't|doesn't|don't|isn't|wasn't|"
    r"aren't|weren't|without|neither|nor|useless|impossible|unable|lack|lacks|lacked|"
    r"failed|fails|no longer|closed|stopped|ceased|ended|abandoned|demolished|destroyed|"
    r"left|lost|only)\b",
    re.IGNORECASE,
)
_AUX = frozenset(
    ("is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would",
     "has", "have", "had", "should", "shall", "may", "might", "must", "if")
)  # fmt: skip
_PRONOUN = re.compile(r"\b(it|he|she|they|him|her|them|its|his|their)\b", re.IGNORECASE)
_AND = re.compile(
    r",?\s+\band (?:also |then )?(?=(?:what|why|how|when|where|which|who|whom|whose|in which|"
    r"is|are|was|were|did|does|do)\b)",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"(?:^|(?<=[.?!]))\s*(?:please\s+)?(?:answer|reply|respond)\b[^.?!]*[.?!]?\s*$"
    r"|(?:^|(?<=[.?!]))\s*(?:(?:in\s+)?(?:one|a single)\s+word(?:\s+only)?|yes\s+or\s+no)"
    r"[.?!]?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Question:
    """One question, read: what kind of answer it wants and what it is about."""

    text: str
    kind: Kind
    form: Form
    terms: tuple[str, ...]
    entities: tuple[str, ...]
    unit: str | None = None  # "how tall" wants a length, "how many" a count…

    @property
    def wants_span(self) -> bool:
        return self.kind in ("date", "measure", "place", "person")


def read(prompt: str) -> Question:
    """What ``prompt`` asks for (its first question when it holds several)."""
    text = " ".join(prompt.split())
    form = _form(text)
    asked = parts(_asked(text))[0]
    lowered = asked.lower()
    first = (_WORD.findall(lowered) or [""])[0]
    kind: Kind = "other"
    unit: str | None = None
    # The question's own wh-word decides, not one in a clause after it ("How many
    # sailors drowned when the ship ran aground?" wants a number).
    found = [(m.start(), k, m) for k, pattern in _KINDS for m in [pattern.search(lowered)] if m]
    if found:
        _, kind, match = min(found, key=lambda f: f[0])
        if kind == "measure" and match.lastindex:
            unit = match.group(1)
    elif first in _AUX and not re.match(r"(?:can|could|would|will) you\b", lowered):
        kind = "yesno"
    if form == "yesno":
        kind = "yesno"
    return Question(text, kind, form, tuple(dict.fromkeys(stems(asked))), entities(asked), unit)


_KINDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("date", re.compile(r"\b(?:when|what year|which year|what date|what century|in what year)\b")),
    ("measure", re.compile(
        r"\bhow (tall|high|long|far|much|many|big|large|heavy|old|deep|wide|fast|often)\b")),
    ("measure", re.compile(r"\bwhat (?:is|was|are|were) the (?:height|length|population|price|"
                           r"cost|size|area|weight|depth|speed|distance)\b")),
    ("place", re.compile(rf"\bwhere\b|\b(?:which|what) (?:{_PLACE_NOUNS})\b")),
    ("person", re.compile(r"\b(?:who|whom|whose)\b|\b(?:which|what) (?:person|man|woman|"
                          r"character)\b|\bname the\b.*\b(?:character|person|man|woman|one)\b")),
)  # fmt: skip


def parts(prompt: str) -> list[str]:
    """The questions a compound prompt holds, each standing on its own: "How tall is the
    Eiffel Tower and when was it finished?" is two, and the second is asked of the Eiffel
    Tower rather than of "it". A prompt of one question is itself."""
    text = " ".join(prompt.split())
    body = _INSTRUCTION.sub("", text).strip() or text
    pieces = [p.strip() for p in re.split(r"(?<=\?)\s+", body) if p.strip()]
    questions = [p for p in pieces if p.endswith("?")]
    if len(questions) < 2:
        halves = [h.strip() for h in _AND.split(body, maxsplit=1) if h.strip()]
        if len(halves) == 2 and len(halves[0].split()) >= 2 and len(halves[1].split()) >= 2:
            mark = "?" if body.endswith("?") else ""
            questions = [halves[0].rstrip(",") + mark, halves[1]]
        else:
            return [prompt]
    # A first part that itself says "she" names no one later parts could mean instead.
    subject = "" if _PRONOUN.search(questions[0]) else _subject(questions[0])
    out = [questions[0]]
    for question in questions[1:]:
        if subject and not entities(question):
            question = _PRONOUN.sub(lambda m: _replace(m.group(1), subject), question, count=1)
        out.append(question[:1].upper() + question[1:])
    return out[:4]


def stems(text: str, *, expand: bool = False) -> list[str]:
    """The content words of ``text``, stemmed; with ``expand``, the words a sentence that
    answers it may use instead are added (``tall`` → ``high``, ``height`` …)."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        word = word.replace("'s", "").replace("’s", "")
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(stem(word))
    if expand:
        extra = [r for s in out for group in _RELATED if _related(s, group) for r in group]
        out += [e for e in dict.fromkeys(extra) if e not in out]
    return out


def stem(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for ending in ("ational", "ations", "ation", "ions", "ion", "ments", "ment", "ings", "ing",
                   "edly", "ies", "ied", "ed", "es", "ly", "s"):  # fmt: skip
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    # "injury" and "injured", "country" and "countries" meet at "injur", "countr".
    return word[:-1] if word.endswith("y") and len(word) >= 5 else word


def entities(text: str) -> tuple[str, ...]:
    """Proper names, numbers and years that ``text`` mentions (a sentence's first word
    counts only when it is not a question word)."""
    found: list[str] = []
    for match in _PROPER.finditer(text):
        name = match.group(0).strip()
        words = name.split()
        while words and words[0].lower() in _STOP | _AUX | {"answer", "name", "if", "during"}:
            words = words[1:]
        if words:
            found.append(" ".join(words))
    found += re.findall(r"\b\d[\d,.]*\b", text)
    return tuple(dict.fromkeys(f for f in found if f))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: paragraphs and list items apart, and no break after an
    abbreviation ("Dr. Elara Vance") or an initial."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*[-*#\d])", text):
        flat = " ".join(block.split())
        pieces = [s.strip() for s in _SENTENCE.split(flat) if s.strip()]
        for piece in pieces:
            if out and out[-1] in pieces and _ABBREVIATION.search(out[-1]):
                out[-1] = f"{out[-1]} {piece}"
            else:
                out.append(piece)
    return out


def statements(said: Sequence[str]) -> list[bool]:
    """Which sentences state something: a question in the evidence, or an item of a list
    of questions ("Q4: Name the …"), answers nothing."""
    return [not (s.rstrip("\"'”) ").endswith("?") or _LISTED.match(s)) for s in said]


def in_context(said: Sequence[str], title: str = "") -> list[str]:
    """Each sentence as it is scored: with the names its pronouns stand for (those of the
    sentence before, or the unit's title), so "It stands 330 metres high" after a sentence
    about the Eiffel Tower is about the Eiffel Tower."""
    out: list[str] = []
    topic = _names(title) or _names(said[0] if said else "")[:1]
    previous: list[str] = []
    for sentence in said:
        names = _names(sentence)
        carried: list[str] = []
        if _PRONOUN.search(sentence) or not names:
            carried = [n for n in dict.fromkeys(topic + previous) if n not in names]
        out.append(" ".join([sentence, *carried]))
        previous = names or previous
    return out


def _names(text: str) -> list[str]:
    return [e for e in entities(text) if not e[:1].isdigit()]


def spans(sentence: str, question: Question) -> list[str]:
    """The parts of ``sentence`` of the kind ``question`` asks for, that the question does
    not already say (a "when" question about 1889 is not answered by "1889")."""
    said = question.text.lower()
    found: list[str] = []
    if question.kind == "date":
        found = [m.group(0) for m in _DATE.finditer(sentence)]
    elif question.kind == "measure":
        found = [_trim(m.group(0)) for m in _MEASURE.finditer(sentence)]
        numbers = set(re.findall(r"\d[\d,.]*", said))
        found = [f for f in found if not (set(re.findall(r"\d[\d,.]*", f)) & numbers)]
        found = [f for f in found if not _DATE.fullmatch(f) or question.unit in ("old", "long")]
        found = [f for f in found if not re.search(rf"\b(?:{_MONTHS})\b", f, re.IGNORECASE)]
        if question.unit not in (None, "many", "much"):
            found = [f for f in found if _has_unit(f) and not _DATE.fullmatch(f.split()[0])]
        fitting = _UNITS.get(question.unit or "")
        if fitting is not None:
            found = [f for f in found if fitting.search(f)]
    elif question.kind == "place":
        found = _named_beside(sentence, question) or [m.group(1) for m in _PLACE.finditer(sentence)]
    elif question.kind == "person":
        places = {m.group(1) for m in _PLACE.finditer(sentence)}
        found = [
            m.group(0)
            for m in _PROPER.finditer(sentence)
            if (m.start() > 0 or m.group(0).split()[0] not in ("The", "A", "An", "It", "In"))
            and m.group(0) not in places
        ]
        found = [f.removeprefix("The ").strip() for f in found]
        # "Who …" asks for someone: "the Solar Syndicate's profits" names a body, not a
        # person, though it stands as close to the verb as "Commander Vex".
        found = [f for f in found if not _BODY.search(f)]
    return [f for f in found if f and f.lower() not in said]


def answers_kind(answer: str, question: Question) -> bool:
    """Whether ``answer`` is of the kind ``question`` asks for."""
    if question.kind == "yesno":
        return bool(re.match(r"\W*(?:yes|no)\b", answer, re.IGNORECASE))
    if question.kind == "date":
        return _DATE.search(answer) is not None or _WHEN.search(answer) is not None
    if question.kind == "measure":
        return re.search(rf"\d|\b(?:{_NUMBER_WORDS})\b", answer, re.IGNORECASE) is not None
    if question.kind in ("place", "person"):
        return _PROPER.search(answer) is not None
    return True


def evidence(units: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[int, str]], list[str]]:
    """The statements of ``units`` (DS003 ``{title, text}``), each once: ``(unit index,
    sentence)`` and the text each is ranked by (:func:`in_context`). A question in the
    evidence states nothing, and a sentence two units hold is one sentence."""
    found: list[tuple[int, str]] = []
    scored: list[str] = []
    seen: set[str] = set()
    for index, unit in enumerate(units):
        said = sentences(str(unit.get("text") or ""))
        context = in_context(said, str(unit.get("title") or ""))
        for n, (sentence, stated) in enumerate(zip(said, statements(said), strict=True)):
            if stated and sentence not in seen:
                seen.add(sentence)
                found.append((index, sentence))
                scored.append(context[n])
    return found, scored


def verdict(question: Question, scored: Sequence[str]) -> tuple[bool, int] | None:
    """Yes (True) or no for a yes/no ``question`` by the evidence ``scored`` (as
    :func:`evidence` gives it), and the index of the sentence that decides; ``None`` when
    no sentence is about the question. Yes, unless a name, number or year the question
    states is said nowhere, or the sentence most about the question denies it."""
    ranked = [(score, i) for score, i in rank(question, scored) if score > 0]
    if not ranked:
        return None
    whole = " ".join(scored).lower()
    absent = [e for e in question.entities if e.lower() not in whole]
    if not absent:
        preferred = _preference(question, scored)
        if preferred is not None:
            return preferred
    best = ranked[0][1]
    return not absent and polarity(scored[best], question), best


def _preference(question: Question, scored: Sequence[str]) -> tuple[bool, int] | None:
    """ "Would X put A over B?": yes when what the evidence says of X is about A more than
    about B, no when about B more; ``None`` when the question weighs nothing or the
    evidence does not lean ("protect the Flux Core" answers "rescue her over securing the
    Flux Core", though no sentence says "not")."""
    match = _PREFER.search(question.text)
    if match is None:
        return None
    before = entities(question.text[: match.start()])
    subject = [
        w for w in (before[-1].split() if before else ()) if w.rstrip(".") not in _TITLE_WORDS
    ]
    one, other = set(stems(match.group(1))), set(stems(match.group(2)))
    one, other = one - other, other - one
    if not subject or not one or not other:
        return None
    about = re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in subject)})\b")
    leaning: list[tuple[int, int]] = []
    for index, sentence in enumerate(scored):
        if about.search(sentence):
            said = set(stems(sentence))
            leaning.append((len(said & one) - len(said & other), index))
    total = sum(lean for lean, _ in leaning)
    if not total:
        return None
    decisive = max(leaning, key=lambda li: (li[0] if total > 0 else -li[0], -li[1]))
    return total > 0, decisive[1]


def cover(
    question: Question,
    scored: Sequence[str],
    ranked: Sequence[tuple[float, int]],
    chosen: Sequence[int],
    most: int = 2,
) -> list[int]:
    """``chosen`` (indexes into ``scored``), plus the best-ranked sentence about each name
    the question asks about that no chosen sentence mentions, up to ``most`` more: a
    question about two people is not answered by sentences about one of them. A name the
    evidence never mentions ("Construct" opening "Construct a counterfactual") adds
    nothing."""
    picked = list(chosen)
    for name in question.entities:
        if len(picked) - len(chosen) >= most:
            break
        words = [w for w in name.split() if w.rstrip(".") not in _TITLE_WORDS and len(w) > 2]
        if not words or name[:1].isdigit():
            continue
        pattern = re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in words)})\b", re.IGNORECASE)
        if any(pattern.search(scored[i]) for i in picked):
            continue
        extra = next((i for _, i in ranked if i not in picked and pattern.search(scored[i])), None)
        if extra is not None:
            picked.append(extra)
    return picked


#: An explanation may link its sentences through this many more hops, up to this many.
MAX_HOPS = 2
MAX_CHAIN = 8


def explains(prompt: str) -> bool:
    """Whether ``prompt`` asks why or how one thing leads to another."""
    return (
        re.match(r"\W*(?:explain|why|how come|trace|show why)\b", prompt, re.IGNORECASE) is not None
    )


def chain(question: Question, texts: Sequence[str], chosen: Sequence[int]) -> list[int]:
    """For "explain why": ``chosen`` (indexes into ``texts``) and the sentences that link
    them — "AchillesIDE uses Ploinky" and "Sandboxing is relevant for secure execution"
    are linked by "Ploinky provides sandboxing", which shares a word with each and none
    with the question. Retrieval and the extractive solver follow the same links, so the
    middle of a chain reaches the solver."""
    asked = set(question.terms)
    words = [set(stems(text)) - asked for text in texts]
    picked = list(chosen)
    for _ in range(MAX_HOPS):
        links = {
            i: sum(1 for j in picked if words[i] & words[j]) + bool(set(stems(texts[i])) & asked)
            for i in range(len(texts))
            if i not in picked
        }
        added = sorted((i for i, n in links.items() if n >= 2), key=lambda i: (-links[i], i))
        if not added:
            break
        picked += added[: MAX_CHAIN - len(picked)]
        if len(picked) >= MAX_CHAIN:
            break
    return picked


def polarity(sentence: str, question: Question | None = None) -> bool:
    """False when the sentence says something is not so (a word of denial the question
    itself uses does not count: "Did the factory close?" is not denied by "closed")."""
    asked = set(stems(question.text)) if question is not None else set()
    return not any(stem(m.group(0).lower()) not in asked for m in _NEGATION.finditer(sentence))


class BM25:
    """Okapi BM25 over a few texts (the sentences or units of a request's evidence)."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(stems(t)) for t in texts]
        self.k1, self.b = k1, b
        lengths = [sum(d.values()) for d in self.docs]
        self.average = (sum(lengths) / len(lengths)) if lengths else 1.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def score(self, index: int, terms: Sequence[str]) -> float:
        doc = self.docs[index]
        length = sum(doc.values()) or 1
        total = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                norm = tf + self.k1 * (1 - self.b + self.b * length / (self.average or 1))
                total += self.idf.get(term, 0.0) * tf * (self.k1 + 1) / norm
        return total


def rank(question: Question, texts: Sequence[str]) -> list[tuple[float, int]]:
    """``texts`` by how well each answers ``question``, best first: BM25 over the
    question's key terms (the related words at half weight), the question's entities
    found, and a span of the kind asked for."""
    if not texts:
        return []
    bm25 = BM25(texts)
    own = list(question.terms)
    related = [t for t in stems(question.text, expand=True) if t not in own]
    lowered = [t.lower() for t in texts]
    out: list[tuple[float, int]] = []
    for index, text in enumerate(texts):
        if echoes(question, text):
            out.append((0.0, index))
            continue
        score = bm25.score(index, own) + 0.5 * bm25.score(index, related)
        named = [e for e in question.entities if e.lower() in lowered[index]]
        score += 0.5 * len(named)
        if score > 0 and question.wants_span:
            score *= 1.6 if spans(text, question) else 0.6
        out.append((round(score, 4), index))
    out.sort(key=lambda pair: (-pair[0], pair[1]))
    return out


def echoes(question: Question, text: str) -> bool:
    """Whether ``text`` only says the question again (a source that lists its own
    questions): four in five of its words, five or more, are the question's. An echo of
    the question is no evidence for its answer."""
    said = set(stems(text))
    asked = set(question.terms)
    if len(said) < 5 or not asked:
        return False  # a short sentence that says the question's words may well answer it
    return len(said & asked) / len(said) >= 0.8


def coverage(question: Question, text: str) -> float:
    """The share of the question's key terms (or a related word) that ``text`` says."""
    if not question.terms:
        return 0.0
    said = set(stems(text))
    hit = 0
    for term in question.terms:
        group = next((g for g in _RELATED if _related(term, g)), (term,))
        if term in said or any(_related(s, group) for s in said):
            hit += 1
    return hit / len(question.terms)


def _related(stemmed: str, group: tuple[str, ...]) -> bool:
    return any(stemmed == g or (len(g) >= 4 and stemmed.startswith(g)) for g in group)


def _form(text: str) -> Form:
    lowered = text.lower()
    if re.search(r"\byes or no\b|\byes/no\b", lowered):
        return "yesno"
    if re.search(r"\b(?:single|one)[- ]word\b", lowered):
        return "word"
    return "free"


def _asked(text: str) -> str:
    """The question itself, without the instructions about the answer's form."""
    body = _INSTRUCTION.sub("", text).strip()
    return body or text


def _subject(question: str) -> str:
    named = [e for e in entities(question) if not e[:1].isdigit() and e[:1].isupper()]
    if not named:
        return ""
    subject = max(named, key=len)
    return f"the {subject}" if re.search(rf"\bthe {re.escape(subject)}", question) else subject


def _replace(pronoun: str, subject: str) -> str:
    lowered = pronoun.lower()
    if lowered in ("its", "his", "their"):
        return f"{subject}'s"
    return subject


def _named_beside(sentence: str, question: Question) -> list[str]:
    """For "which river …", the name the sentence gives beside "river" ("the river Wend",
    "the port of Tromsø", "Corran Bay")."""
    which = _WHICH.search(question.text.lower())
    if which is None:
        return []
    noun = re.escape(which.group(1))
    found = re.findall(rf"(?i:\b{noun})\s+(?:of\s+)?({_NAME}(?:\s+{_NAME})*)", sentence)
    before = re.findall(rf"({_NAME}(?:\s+{_NAME})*)\s+(?i:{noun})\b", sentence)
    found += [f"{name} {which.group(1).capitalize()}" for name in before]
    return found


def _trim(found: str) -> str:
    words = found.split()
    while len(words) > 1 and (words[-1].lower() in _UNITLESS or words[-1].lower() in _STOP):
        words.pop()
    return " ".join(words).rstrip(",.")


def _has_unit(found: str) -> bool:
    return (
        re.search(r"[a-zA-Z%]", re.sub(rf"\b(?:{_NUMBER_WORDS})\b", "", found, flags=re.I))
        is not None
    )
