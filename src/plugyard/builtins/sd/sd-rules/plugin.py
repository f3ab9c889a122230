"""A DS027 ``sd-plugin`` by rules: ``detectSeeds`` and ``normalizePersistentContext``
answer SOP Lang Control documents (one statement a line: ``@id command args``)."""

from __future__ import annotations

import re
from typing import Any

from plugyard.reasoning.questions import sentences

MAX_UNITS = 2_000
SENTENCES_PER_UNIT = 5
_PARAGRAPH = re.compile(r"\n\s*\n")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: The act of an intent, by the words that announce it (first match wins).
ACTS = (
    ("compare", ("compare", "contrast", "difference", "versus", " vs ")),
    ("define", ("define", "what is", "what are", "meaning of", "definition")),
    ("list", ("list", "enumerate", "name all", "which are")),
    ("recommend", ("recommend", "suggest", "should i", "best way", "advise")),
    ("describe", ("describe", "tell me about", "characterize", "summarize", "summarise")),
    ("lookup", ("who", "when", "where", "which", "how many", "how much", "what")),
    ("explain", ("explain", "why", "how")),
)
#: An instruction's first word names its act outright.
_LEADS = {
    "explain": "explain",
    "compare": "compare",
    "contrast": "compare",
    "list": "list",
    "enumerate": "list",
    "describe": "describe",
    "summarize": "describe",
    "summarise": "describe",
    "tell": "describe",
    "define": "define",
    "recommend": "recommend",
    "suggest": "recommend",
}
#: Coarse topics planners learn by, by words that signal them.
TOPICS = {
    "legal": ("law", "legal", "contract", "court", "statute", "liability", "clause", "lawsuit"),
    "medical": ("medical", "disease", "symptom", "treatment", "drug", "patient", "health"),
    "finance": ("finance", "money", "tax", "invoice", "price", "stock", "budget", "loan"),
    "technical": ("code", "software", "server", "error", "install", "api", "database", "bug"),
    "science": ("physics", "chemistry", "biology", "energy", "atom", "cell", "experiment"),
    "geography": ("capital", "country", "river", "city", "mountain", "continent", "border"),
    "history": ("history", "war", "century", "empire", "king", "ancient", "revolution"),
}
_QUESTION_START = (
    "what",
    "why",
    "how",
    "who",
    "when",
    "where",
    "which",
    "is",
    "are",
    "can",
    "does",
    "do",
    "should",
    "could",
    "would",
    "will",
)
_INSTRUCTION_START = (
    "explain",
    "compare",
    "list",
    "describe",
    "define",
    "summarize",
    "summarise",
    "tell",
    "give",
    "find",
    "show",
    "recommend",
    "suggest",
    "name",
    "contrast",
    "evaluate",
)
#: Statements that are guidance for a phase rather than evidence (DS027 PhaseScopes).
_SCOPES = (
    (
        (
            "answer in",
            "format",
            "bullet",
            "be brief",
            "concise",
            "in one word",
            "single word",
            "one word",
            "yes or no",
            "in one sentence",
            "markdown",
            "table",
        ),
        "gs-plugin",
    ),
    (("must cite", "cite the", "only use", "do not invent", "verify"), "val-plugin"),
    (("step by step", "break it down", "one part at a time"), "frame"),
    (("use the plugin", "prefer the", "planner"), "mrp-plan-plugin"),
)


def detectSeeds(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    prompt = str(input.get("prompt") or "").strip()
    sentences = _sentences(prompt)
    asked = [s for s in sentences if _is_intent(s)] or ([prompt] if prompt else [])
    told = [s for s in sentences if s not in asked]
    lines: list[str] = []
    for n, text in enumerate(asked, 1):
        act, topic = act_of(text), topic_of(text)
        lines += [
            f"@i{n} intent {act} {_q(text)}",
            f"@it{n} set $i{n} topic {topic}",
            f"@io{n} set $i{n} output {_q(_output(text))}",
            f"@s{n} seed $i{n} direct {act} {_q(text)}",
        ]
    units = _units(told, "session::turn", "chat-turn")
    return {
        "status": "success" if asked else "unsupported",
        "intentCNL": "\n".join(lines) or None,
        "currentTurnContextCNL": units or None,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }


def normalizePersistentContext(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    sources = [u for u in input.get("context") or [] if isinstance(u, dict) and u.get("text")]
    if not sources:
        return {"status": "unsupported", "contextCNL": None, "metadata": {}, "error": None}
    source_id = str(input.get("sourceId") or sources[0].get("sourceLink") or "source")
    groups: list[tuple[str, list[str]]] = []
    for source in sources:
        heading = ""
        for paragraph in _PARAGRAPH.split(str(source["text"])):
            if paragraph.strip().startswith("#") and "\n" not in paragraph.strip():
                heading = paragraph.strip().lstrip("#").strip()  # titles what follows
                continue
            sentences = _sentences(paragraph)
            for start in range(0, len(sentences), SENTENCES_PER_UNIT):
                groups.append((heading, sentences[start : start + SENTENCES_PER_UNIT]))
    cnl = _grouped(groups[:MAX_UNITS], source_id, "source-text")
    return {
        "status": "success",
        "contextCNL": cnl,
        "metadata": {"units": len(groups[:MAX_UNITS])},
        "error": None,
    }


def act_of(text: str) -> str:
    first = (_WORD.findall(text.lower()) or [""])[0]
    if first in _LEADS:
        return _LEADS[first]
    lowered = f" {text.lower()} "
    for act, signs in ACTS:
        if any(sign in lowered for sign in signs):
            return act
    return "explain"


def topic_of(text: str) -> str:
    words = {w.lower() for w in _WORD.findall(text)}
    best = max(TOPICS, key=lambda t: len(words & set(TOPICS[t])))
    return best if words & set(TOPICS[best]) else "general"


def _is_intent(sentence: str) -> bool:
    first = (_WORD.findall(sentence.lower()) or [""])[0]
    return (
        sentence.rstrip().endswith("?")
        or first in _INSTRUCTION_START
        or (first in _QUESTION_START and len(sentence.split()) > 2 and not sentence.endswith("."))
    )


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        out += sentences(line)  # no break after "Dr." or an initial
    return out


def _units(sentences: list[str], prefix: str, kind: str) -> str:
    """Related statements grouped: consecutive ones of one scope form one unit."""
    groups: list[tuple[str, list[str]]] = []
    for sentence in sentences:
        if groups and _scope(groups[-1][1][-1]) == _scope(sentence):
            groups[-1][1].append(sentence)
        else:
            groups.append(("", [sentence]))
    return _grouped(groups, prefix, kind)


def _grouped(groups: list[tuple[str, list[str]]], prefix: str, kind: str) -> str:
    lines: list[str] = []
    for n, (heading, group) in enumerate(g for g in groups if g[1]):
        text = " ".join(group)
        title = heading or " ".join(text.split()[:8])
        ku = f"k{n}"
        lines += [
            f'@{ku} ku {"atomic" if len(group) == 1 else "composite"} "{prefix}::unit-{n:03d}"',
            f"@{ku}a set ${ku} sourceId {_q(prefix)}",
            f"@{ku}b set ${ku} sourceType {kind}",
            f"@{ku}c set ${ku} title {_q(title)}",
            f"@{ku}d set ${ku} topic {topic_of(text)}",
            f"@{ku}e set ${ku} claim {_q(text)}",
            f"@{ku}f set ${ku} phaseScopes [{_scope(text)}]",
        ]
    return "\n".join(lines)


def _scope(text: str) -> str:
    lowered = text.lower()
    for signs, scope in _SCOPES:
        if any(sign in lowered for sign in signs):
            return scope
    return "kb-plugin"


def _output(text: str) -> str:
    return {"compare": "comparison", "list": "list", "define": "definition"}.get(
        act_of(text), "short answer"
    )


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
