"""Tool calls that come back as calls, whatever server runs the model (docs/llm.md).

:func:`respond` takes a chat request that offers tools and returns an answer that either
holds tool calls (``finish_reason == "tool_calls"``) or text, never a call written as
text. It does not rely on the server's own tool-call parsing, which small local models
defeat by writing their call as prose, a fenced block or a ``<tool_call>`` tag:

1. **Choose.** The tools are described in the system prompt and the model answers under
   a JSON schema whose one field is the choice among the tools' names and ``none``. A
   request no tool serves is a choice the model makes, not a default it never takes.
2. **Call.** When it chose a tool, the same prompt (so a server's prompt cache serves
   it) asks for the calls under a schema built from the tools' parameters: the name is
   a constant and the arguments follow the tool's own schema, so the call is well-formed
   by construction.
3. **Answer.** When it chose ``none``, it answers the conversation in text, without
   the tools (under the caller's own schema, if any).

A schema travels as OpenAI's ``response_format``, which every backend of docs/llm.md
honours; llama.cpp (the embedded backend) compiles it into a grammar. For a server that
ignores it, text-form calls are read as a fallback (:func:`parse_calls`): a JSON object
``{"name", "arguments"}`` (or ``parameters``), a list of them, fenced or inside
``<tool_call>`` tags, and OpenAI's own ``{"function": {…}}`` shape.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from partial_json_parser import Allow
from partial_json_parser import loads as partial_loads

from plugyard.llm.errors import LlmError, timed_out
from plugyard.llm.grounding import (
    Evidence,
    check,
    is_code,
    stated,
    sums_in,
    takes_arithmetic,
    takes_clock,
)
from plugyard.llm.model import ChatModel, continues
from plugyard.llm.stated import (
    USER_JSON_TRIES,
    clocks_in,
    code_in,
    json_in,
    numbers_in,
    quoted_in,
    spells_boolean,
    states_date,
    words_in,
)
from plugyard.llm.types import ChatAnswer, ChatRequest, Message, TokenLogprob, ToolCall, Usage

#: The choice that means "no tool serves this, answer in text".
NONE = "none"
#: At most this many calls from one answer.
MAX_CALLS = 8
#: A choice is a few tokens; a call is bounded by :func:`_call_budget` (below).
CHOOSE_TOKENS = 32
#: Alternatives read at the choice's first token, where the tool's name begins.
CHOICE_LOGPROBS = 20
#: "none" wins when its first token is at most this much less likely (log-probability)
#: than the chosen tool's. The margin separates requests no tool serves on BFCL's tuning
#: half, but 1.5 (the best there) turned right calls into "none" on the reporting half
#: and on MetaTool (bench/labs/BFCL_LAB.md), so with the embedded default it only
#: overrides a choice when "none" is at least as likely; a stronger model may earn more.
NONE_MARGIN = 0.0
#: A count of calls above one is asked for when the model weighed it at most this much
#: less likely (log-probability) than the one call it wrote. On BFCL's parallel tuning
#: half 1.0 found 16 of 20 counts against 7 written; 2.0 and more began to cost single
#: calls (bench/labs/BFCL_LAB.md, "How many calls").
COUNT_MARGIN = 1.0
#: Another tool than the favoured one (retrieval's first), or none, is chosen only when
#: it is at least this much more likely (log-probability, where the names part) than the
#: favoured one. A 0.5B model's own choice among retrieval's candidates lost to
#: retrieval's first match on MetaTool (0.417 against 0.733) and on Seal-Tools, mostly
#: by choosing none for a request the first candidate serves; margins of 1.5 to 3 did
#: equally well on the tuning halves of MetaTool, Seal-Tools and bench/ask.py
#: (bench/labs/ROUTING_LAB.md, "Favouring retrieval's first"). The same margin serves a
#: client's own functions ranked the same way: on BFCL's multiple and live_multiple
#: tuning halves it took the model's 20 and 13 of 25 right choices to 23 and 23
#: (bench/labs/BFCL_LAB.md, "Which of the client's functions").
FAVOURED_MARGIN = 2.0

#: A call's tokens beyond the values it copies: its punctuation and layout, and per
#: parameter a name (the tool's name counts a token per character). Its values come
#: from the conversation, so a call may write at most this plus one token for each
#: character the conversation holds; a small model that invents a text instead (a story
#: into ``text-stats``) is cut off there rather than at the request's ``max_tokens``
#: (bench/labs/ASK_LAB.md, "Where an ask's time goes").
CALL_TOKENS = 24
PARAMETER_TOKENS = 8

#: A choice's count of calls, its first digit.
_CALLS_VALUE = re.compile(r'"calls"\s*:\s*(\d)')
#: A choice's JSON up to where the chosen name begins.
_CHOICE_VALUE = re.compile(r'\s*\{\s*"tool"\s*:\s*"')

_TOOLS_INTRO = (
    "You have these functions. Each is a JSON object with its name, what it does and "
    "its parameters as JSON Schema:"
)
_CHOOSE = (
    "Decide whether one of the functions serves the user's last request. Answer with "
    'JSON: {"tool": "<function name>", "calls": <how many calls>} to call it (one call '
    "unless the user asks for several separate results), or "
    '{"tool": "none", "calls": 0} when none of the functions does what the user asks '
    "(then you will answer in words)."
)
_CALL = (
    "Call {name}. Answer with a JSON list of {count}, "
    '[{{"name": "<function name>", "arguments": {{…}}}}]. Take every argument value from '
    "the user's request, written as the parameter's type asks (a value, never the type's "
    "name); leave out an optional parameter the request does not give."
)


@dataclass(frozen=True, slots=True)
class Tool:
    """An offered function as the model sees it: name, description, parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    @classmethod
    def of(cls, definition: Mapping[str, Any]) -> Tool:
        """From an OpenAI tool (``{"type": "function", "function": {…}}``) or a bare
        function definition."""
        function = definition.get("function", definition)
        if not isinstance(function, Mapping):
            function = {}
        parameters = function.get("parameters")
        return cls(
            str(function.get("name", "")),
            str(function.get("description") or ""),
            parameters if isinstance(parameters, Mapping) else {"type": "object"},
        )

    def shown(self) -> str:
        return json.dumps(
            {"name": self.name, "description": self.description, "parameters": self.parameters},
            ensure_ascii=False,
        )


async def respond(
    model: ChatModel,
    request: ChatRequest,
    *,
    text: bool = True,
    favoured: str | None = None,
    over_none: bool = True,
    parts: Sequence[str] = (),
) -> ChatAnswer:
    """``request`` answered by ``model``: its tool calls (``finish_reason`` is
    ``tool_calls``) or its text. The answer's ``llm_calls``, ``usage`` and
    ``duration_ms`` count every call made. Without tools, one plain call. ``text=False``:
    a caller that writes its own answer when no tool serves gets no calls and no text
    then, and the model is not asked to write one. ``favoured``: the tool the caller's
    own ranking puts first (retrieval's best match); the model's choice of another tool,
    or of none, stands only when it is :data:`FAVOURED_MARGIN` more likely.
    ``over_none=False``: the favoured tool overrules only another tool, never a choice
    of none (a ranking's first that is not relevant to the request). ``parts``: the
    tools the request's separate parts point to (the caller's ranking of each part);
    once the model chose a tool, a call to each of the others is asked for too, and
    kept only when the conversation states its required values."""
    if not request.tools:
        return await model.chat(request)
    tools = [Tool.of(t) for t in request.tools]
    tools = [t for t in tools if t.name]
    names = [t.name for t in tools]
    none = _none_choice(names)
    started = time.perf_counter()
    deadline = started + request.deadline_s
    prompt = _prompt(request.messages, tools)
    answers: list[ChatAnswer] = []

    choose = replace(
        _step(
            request,
            (*prompt, Message("system", _CHOOSE.replace('"none"', json.dumps(none)))),
            schema=_choice_schema([*names, none]),
            max_tokens=CHOOSE_TOKENS,
            deadline=deadline,
        ),
        top_logprobs=CHOICE_LOGPROBS,
    )
    answer = await model.chat(choose)
    answers.append(answer)
    chosen = _chosen(answer, names, none)
    if isinstance(chosen, str) or chosen is None:
        chosen = _weighed(answer, chosen, none, favoured if favoured in names else None,
                          over_none=over_none)  # fmt: skip
    written, count = _count(answer)
    if isinstance(chosen, tuple):  # the server ignored the schema and wrote calls
        return _merged(answers, answer, _tidied(chosen, tools, _said(request.messages)), started)
    if chosen is None and not text:
        return _merged(answers, replace(answer, text="", json=None), (), started)
    if chosen is None:
        words = await model.chat(_step(request, request.messages, deadline=deadline,
                                      schema=request.json_schema))  # fmt: skip
        answers.append(words)
        return _merged(answers, words, (), started)

    planned = [chosen, *dict.fromkeys(p for p in parts if p != chosen and p in names)]
    count = max(count, len(planned))
    call, order = _call_step(model, request, prompt, tools, planned, count, deadline)
    answer = await _written(model, call, order, count, len(planned))
    answers.append(answer)
    said = _said(request.messages)
    kept = _tidied(_calls_written(answer, names), tools, said)
    if count > written:
        kept = _surplus_dropped(kept, written, tools, said)
    return _merged(answers, answer, kept, started)


async def mend(model: ChatModel, request: ChatRequest, calls: Sequence[ToolCall],
               refused: ToolCall, reason: str,
               unstated: Sequence[str] = ()) -> ChatAnswer:  # fmt: skip
    """``refused``, one of ``calls`` (:func:`respond`'s answer to ``request``), written
    again after ``reason``, the sentence that says why it was not made or failed; the
    others of ``calls`` ran and are not asked for again. The call step goes on from the
    calls with the reason after them; the choice is not asked again. Asked again, the
    choice cost a repair round a second reading of the conversation and never changed
    the tool the 0.5B model chose (bench/labs/ASK_LAB.md, "A repair that goes on from the
    call"); this way the prompt cache serves all but the reason.

    ``unstated`` names the arguments refused because the request does not state them:
    each is written again among the values of its kind the user's messages state, when
    they state some (:func:`stated_choices`)."""
    tools = [t for t in (Tool.of(d) for d in request.tools or ()) if t.name]
    names = [t.name for t in tools]
    if refused.name not in names:
        raise LlmError("no offered tool's call to write again", code="llm_invalid_answer")
    started = time.perf_counter()
    deadline = started + request.deadline_s
    prompt = _prompt(request.messages, tools)
    said = " ".join(m.content for m in request.messages if m.role == "user")
    offered = [
        replace(t, parameters=stated_choices(
            t.parameters, {n: refused.arguments.get(n) for n in unstated}, said))
        if t.name == refused.name else t
        for t in tools
    ]  # fmt: skip
    call, order = _call_step(model, request, prompt, offered, [refused.name], 1, deadline)
    # In the layout of the frame the model goes on from (_frame).
    written = (
        "[\n  "
        + ",\n  ".join(
            json.dumps({"name": c.name, "arguments": dict(c.arguments)}, ensure_ascii=False)
            for c in calls
        )
        + "\n]"
    )
    why = Message("system", f"{reason} Write the call again.")
    call = replace(call, messages=(*call.messages, Message("assistant", written), why))
    answer = await _written(model, call, order, 1, 1)
    kept = _tidied(_calls_written(answer, names), tools, _said(request.messages))
    return _merged([answer], answer, kept, started)


#: At most this many stated values are offered for one argument.
MAX_CHOICES = 16


def stated_choices(parameters: Mapping[str, Any], refused: Mapping[str, Any],
                   said: str) -> Mapping[str, Any]:  # fmt: skip
    """``parameters`` with each argument of ``refused`` (name → the value refused)
    limited to the values of its kind that ``said`` states: a number parameter to the
    numbers it writes; a time of day (:func:`~plugyard.llm.grounding.takes_clock`) to
    the times it states ("noon" as 12:00) when it states no date; a document parameter
    (an object, an array, or one of any type) to the JSON documents it writes (the 0.5B
    model wrote the parameter's own JSON Schema as the data to query); a free text parameter
    to the texts it quotes standing alone and shaped like the refused value (one word for
    one word, several for several: the quoted sentence of 'What dates are in "…"' is no
    time zone for a ``from_zone`` the model wrote as "UTC"); and an expression the model
    wrote to the expressions the request writes, quoted or not
    (:func:`~plugyard.llm.stated.code_in`); a parameter that takes arithmetic to the
    sums the request writes and the request itself. An argument whose kind the text
    states no value of is left as it was. Asked once more after a refusal, the 0.5B
    model wrote the same invented value again (1024 for "What is 1 TB in GB?", a
    made-up sentence for the text of a request that quotes one, 14:00 for "noon"): the
    values it may write are then the request's, and which of them is still its
    choice."""
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not refused:
        return parameters
    narrowed = dict(properties)
    for name, value in refused.items():
        schema = properties.get(name)
        if not isinstance(schema, Mapping) or any(
            key in schema for key in ("enum", "const", "anyOf", "oneOf", "pattern")
        ):
            continue
        clock = takes_clock(schema)
        if "format" in schema and not clock:
            continue
        kind = _TYPES.get(str(schema.get("type", "")).lower())
        choices: list[Any] = []
        if kind in ("number", "integer"):
            low, high = schema.get("minimum"), schema.get("maximum")
            found = [n for n in sorted(numbers_in(said, readings=False))
                     if (not isinstance(low, int | float) or n >= low)
                     and (not isinstance(high, int | float) or n <= high)]  # fmt: skip
            choices = [int(n) for n in found if n.is_integer()] if kind == "integer" else found
        elif kind in ("object", "array") or "type" not in schema:
            # A document parameter (or one of any type) among the JSON documents the
            # request writes: its objects first, as "xs[0]" writes a list too.
            found = [d for d in json_in(said, tries=USER_JSON_TRIES) if d]
            objects = [d for d in found if isinstance(d, dict)]
            lists = [d for d in found if isinstance(d, list)]
            choices = (
                objects if kind == "object" else lists if kind == "array" else (objects or lists)
            )
        elif kind == "string" and clock:
            choices = [] if states_date(said, dt.date.today()) else clocks_in(said)
        elif kind == "string" and takes_arithmetic(schema) and numbers_in(said, readings=False):
            # Arithmetic as the request writes it, a sum or the whole request: for
            # "greatest common divisor of 84 and 126" the 0.5B model wrote "84 divided by
            # 126" twice. The tool reads the user's words.
            choices = [*sums_in(said), said.strip()]
        elif kind == "string" and isinstance(value, str) and is_code(value):
            # An expression among those the request writes, quoted or not: for "does
            # sort_by(people, &age)[-1].name parse?" the 0.5B model wrote one of its own.
            written = dict.fromkeys([*quoted_in(said, alone=True), *code_in(said)])
            choices = [c for c in written if is_code(c)]
        elif kind == "string":
            several = _several_words(value)
            choices = [q for q in quoted_in(said, alone=True) if _several_words(q) == several]
        if choices:
            narrowed[name] = {**schema, "enum": choices[:MAX_CHOICES]}
    return {**parameters, "properties": narrowed}


def _several_words(value: Any) -> bool:
    return isinstance(value, str) and len(value.split()) > 1


def _call_step(model: ChatModel, request: ChatRequest, prompt: Sequence[Message],
               tools: Sequence[Tool], planned: Sequence[str], count: int,
               deadline: float) -> tuple[ChatRequest, list[Tool]]:  # fmt: skip
    """The request for ``count`` calls, the first ones to ``planned`` in turn, and the
    tools in the order its schema offers them."""
    order = [next(t for t in tools if t.name == name) for name in planned]
    order += [t for t in tools if t.name not in planned]
    instruction = _CALL.format(name=" and ".join(planned), count=_calls_text(count))
    instruction += "".join(
        _parameters_text(t, named=len(planned) > 1) for t in order[: len(planned)]
    )
    step = replace(
        _step(
            request,
            (*prompt, Message("system", instruction)),
            schema=calls_schema(order, count, planned=len(planned)),
            deadline=deadline,
            max_tokens=_call_budget(request.messages, order, count),
        ),
        # A backend that continues an answer gets the frame written for it: a unit
        # conversion's call then takes about 24 generated tokens instead of 43.
        prefix=_frame(planned[0]) if continues(model) else "",
    )
    return step, order


async def _written(model: ChatModel, call: ChatRequest, order: Sequence[Tool], count: int,
                   planned: int) -> ChatAnswer:  # fmt: skip
    """The model's answer to the call step; an answer cut off at its budget read as far
    as it is whole."""
    try:
        answer = await model.chat(call)
    except LlmError as exc:
        if exc.code != "invalid_request" and exc.details.get("status") != 400:
            raise
        # The server could not compile the tool's schema into a grammar: ask again with
        # the arguments unconstrained, still read as calls.
        loose = calls_schema(order, count, loose=True, planned=planned)
        answer = await model.chat(replace(call, json_schema=loose))
    if answer.finish_reason == "length" and not answer.tool_calls:
        answer = replace(answer, json=_whole_part(answer.text))
    return answer


def _calls_written(answer: ChatAnswer, names: Sequence[str]) -> tuple[ToolCall, ...]:
    calls = answer.tool_calls or _calls_of(answer, names)
    if not calls:
        raise LlmError(
            "the model chose a tool but wrote no call to it",
            code="llm_invalid_answer",
            text=answer.text[:500],
        )
    return calls


# ------------------------------------------------------------------ prompts, schemas


def _prompt(messages: Sequence[Message], tools: Sequence[Tool]) -> tuple[Message, ...]:
    """The conversation with the tools described in its system message."""
    catalog = "\n".join([_TOOLS_INTRO, *(t.shown() for t in tools)])
    if messages and messages[0].role == "system":
        head = Message("system", f"{messages[0].content}\n\n{catalog}")
        return (head, *messages[1:])
    return (Message("system", catalog), *messages)


def _step(
    request: ChatRequest,
    messages: Sequence[Message],
    *,
    deadline: float,
    schema: Mapping[str, Any] | None,
    max_tokens: int | None = None,
) -> ChatRequest:
    left = deadline - time.perf_counter()
    if left <= 0:
        raise timed_out("the model ran past the request's deadline")
    return replace(
        request,
        messages=tuple(messages),
        json_schema=schema,
        schema_name="answer" if schema is request.json_schema else "tool_choice",
        tools=None,
        max_tokens=min(max_tokens or request.max_tokens, request.max_tokens),
        deadline_s=left,
        lenient=schema is not request.json_schema,
    )


def _frame(name: str) -> str:
    """The call list up to its first call's arguments, which the schema fixes anyway,
    laid out as the embedded default most often writes it. It stops before the space
    the model writes next: ending on it would make the model begin its arguments at a
    token boundary it does not make itself, and a 0.5B model then wrote other values
    (``avoid_tolls`` flipped on BFCL)."""
    return '[\n  {"name": ' + json.dumps(name) + ', "arguments":'


def _none_choice(names: Sequence[str]) -> str:
    choice = NONE
    while choice in names:  # a tool of that name: the sentinel steps aside
        choice = f"_{choice}"
    return choice


def _choice_schema(choices: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": list(choices)},
            "calls": {"type": "integer", "enum": list(range(MAX_CALLS + 1))},
        },
        "required": ["tool", "calls"],
        "additionalProperties": False,
    }


def _count(answer: ChatAnswer) -> tuple[int, int]:
    """How many calls the model wrote that the request needs, and how many to ask for.
    The call step asks for exactly that many, since a list left open is one a small
    model never closes. A 0.5B model writes 1 for most requests that need several
    ("Taylor Swift and Maroon 5"), but weighs the right count close behind: a count
    above one within :data:`COUNT_MARGIN` of the one it wrote is asked for, and the
    surplus calls are then kept only when they are new and grounded."""
    value = answer.json.get("calls") if isinstance(answer.json, Mapping) else None
    written = value if isinstance(value, int) and 1 <= value <= MAX_CALLS else 1
    if written > 1:
        return written, written
    counts = _count_alternatives(answer)
    one = counts.get(1, -math.inf)
    many = max(((p, n) for n, p in counts.items() if n > 1), default=(-math.inf, 1))
    return written, (many[1] if many[0] >= one - COUNT_MARGIN else written)


def _count_alternatives(answer: ChatAnswer) -> dict[int, float]:
    """The counts the model weighed where it wrote ``calls``, with their log-probabilities
    (empty when the alternatives do not spell the answer up to there)."""
    found = _CALLS_VALUE.search(answer.text)
    if found is None:
        return {}
    digit = found.start(1)
    walked = list(_spelled(answer))
    for (index, offset), after in itertools.pairwise(walked):
        if offset <= digit < after[1]:
            return {
                int(token): a.logprob
                for a in answer.top_logprobs[index]
                if (token := a.token.strip()).isascii() and token.isdigit()
                and 1 <= int(token) <= MAX_CALLS
            }  # fmt: skip
    return {}


def _surplus_dropped(calls: Sequence[ToolCall], written: int, tools: Sequence[Tool],
                     said: Evidence) -> tuple[ToolCall, ...]:  # fmt: skip
    """The calls the model wrote it needed, then each further one whose required values
    the conversation states and which adds a stated value: asked for more calls than a
    request needs, a small model repeats a call, flips a yes/no or invents values."""
    by_name = {t.name: t for t in tools}
    kept = list(calls[:written])
    for call in calls[written:]:
        tool = by_name.get(call.name)
        # a repeat adds no stated value, so _adds_stated drops it too
        if tool is not None and _states_required(call, tool, said) \
                and _adds_stated(call, kept, tool, said):  # fmt: skip
            kept.append(call)
    return tuple(kept)


def _adds_stated(call: ToolCall, kept: Sequence[ToolCall], tool: Tool, said: Evidence) -> bool:
    """Whether ``call`` asks for something the calls before it do not: another function,
    or a value the conversation states that no earlier call of its function gives that
    argument. A yes/no alone does not count: "aligned or not" is how a small model
    fills a second call it was asked for. Nor does a text whose every number and word an
    earlier call's text of that argument has: asked for three calls of "Add 345, 678
    and 912", it wrote the sum, then "345 - 678 - 912" and "345 * 678 * 912"."""
    earlier = [k for k in kept if k.name == call.name]
    if not earlier:
        return True
    properties = tool.parameters.get("properties")
    shapes = properties if isinstance(properties, Mapping) else {}
    return any(
        not isinstance(value, bool) and not spells_boolean(value)
        and stated(value, shapes.get(name, {}), said)
        and all(k.arguments.get(name) != value for k in earlier)
        and _says_more(value, [k.arguments.get(name) for k in earlier])
        for name, value in call.arguments.items()
    )  # fmt: skip


def _says_more(value: Any, earlier: Sequence[Any]) -> bool:
    """Whether a text value has a number or a word that the earlier texts do not."""
    if not isinstance(value, str):
        return True
    said = set().union(*(_content(e) for e in earlier if isinstance(e, str)))
    return not _content(value) <= said


def _content(text: str) -> set[float | str]:
    return {*numbers_in(text, readings=False), *words_in(text)}


def _states_required(call: ToolCall, tool: Tool, said: Evidence) -> bool:
    properties = tool.parameters.get("properties")
    shapes = properties if isinstance(properties, Mapping) else {}
    required = tool.parameters.get("required")
    return all(
        name in call.arguments and stated(call.arguments[name], shapes.get(name, {}), said)
        for name in (required if isinstance(required, list) else ())
    )


def _calls_text(count: int) -> str:
    return "one call" if count == 1 else f"{count} calls"


def calls_schema(tools: Sequence[Tool], count: int = 1, *, loose: bool = False,
                 planned: int = 1) -> dict[str, Any]:  # fmt: skip
    """A JSON list of ``count`` calls: the first ``planned`` to ``tools[0]``,
    ``tools[1]``, … in turn (the chosen one, then the ones the request's parts point
    to), the others to any of ``tools``; each call's ``arguments`` on the tool's own
    parameter schema (``loose``: any object)."""
    one = [_call_schema(t, loose) for t in tools]
    return {
        "type": "array",
        "prefixItems": one[: max(1, min(planned, count))],
        "items": one[0] if len(one) == 1 else {"anyOf": one},
        "minItems": count,
        "maxItems": count,
    }


def _call_schema(tool: Tool, loose: bool) -> dict[str, Any]:
    arguments = {"type": "object"} if loose else grammar_schema(tool.parameters, top=True)
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


#: JSON Schema's types, and the names some tool catalogs (BFCL's, Python's) use.
_TYPES = {"object": "object", "dict": "object", "array": "array", "list": "array",
          "tuple": "array", "string": "string", "str": "string", "integer": "integer",
          "int": "integer", "number": "number", "float": "number", "boolean": "boolean",
          "bool": "boolean", "null": "null"}  # fmt: skip


def grammar_schema(schema: Any, *, top: bool = False) -> dict[str, Any]:
    """The part of a tool's parameter schema that constrains a call: types (with the
    common aliases read as JSON Schema's), properties, required, items, enums. Text
    the model reads (descriptions, examples) stays in the prompt; what a grammar cannot
    express is left out rather than refused."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind.lower() in _TYPES:
        out["type"] = _TYPES[kind.lower()]
    elif isinstance(kind, list):
        kinds = [_TYPES[k.lower()] for k in kind if isinstance(k, str) and k.lower() in _TYPES]
        if kinds:
            out["type"] = kinds
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        out["enum"] = enum
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            out["anyOf"] = [grammar_schema(o) for o in options]
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and out.get("type", "object") == "object":
        out["type"] = "object"
        out["properties"] = {str(k): grammar_schema(v) for k, v in properties.items()}
        required = schema.get("required")
        if isinstance(required, list):
            out["required"] = [r for r in required if r in out["properties"]]
        # The call's own arguments: only the declared ones, so none is invented.
        if top:
            out["additionalProperties"] = False
    items = schema.get("items")
    if isinstance(items, Mapping) and out.get("type") == "array":
        out["items"] = grammar_schema(items)
    return out


def _parameters_text(tool: Tool, *, named: bool = False) -> str:
    """The chosen tool's parameters named as required or optional: a small model reads
    a JSON Schema's ``required`` list less surely than a sentence (``named``: said of
    the tool by name, when several are called)."""
    properties = tool.parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return ""
    required = tool.parameters.get("required")
    needed = [str(n) for n in properties if isinstance(required, list) and n in required]
    optional = [str(n) for n in properties if str(n) not in needed]
    parts = []
    if needed:
        parts.append(f"Required: {', '.join(needed)}.")
    if optional:
        parts.append(f"Optional, only when the user gives them: {', '.join(optional)}.")
    if named and parts:
        parts.insert(0, f"{tool.name}:")
    return " " + " ".join(parts)


# ------------------------------------------------------------------ arguments


def _said(messages: Sequence[Message]) -> Evidence:
    return Evidence.of(m.content for m in messages)


def _tidied(calls: Sequence[ToolCall], tools: Sequence[Tool],
            said: Evidence) -> tuple[ToolCall, ...]:  # fmt: skip
    by_name = {t.name: t for t in tools}
    return tuple(
        replace(c, arguments=tidy(c.arguments, by_name[c.name], said)) if c.name in by_name else c
        for c in calls
    )


def tidy(arguments: Mapping[str, Any], tool: Tool, said: Evidence) -> dict[str, Any]:
    """A call's arguments as the tool's schema asks, kept to what the conversation
    states (llm/grounding.py judges it, as it judges every call). An optional argument
    whose value the conversation does not state (nor the schema's default) is left out:
    a small model fills optional parameters with values it invented, and leaving one out
    means the tool's own default. A number is written as its parameter's type
    (``number``: a float, ``integer``: an int); one the user gave as a percentage
    becomes a fraction where the parameter asks for a decimal. Required arguments are
    never dropped: the call would be incomplete."""
    properties = tool.parameters.get("properties")
    if not isinstance(properties, Mapping):
        return dict(arguments)
    typed = {
        name: _typed(value, schema, said) if isinstance(schema := properties.get(name), Mapping)
        else value
        for name, value in arguments.items()
    }  # fmt: skip
    dropped = {u.name for u in check(typed, tool.parameters, said) if not u.required}
    return {name: value for name, value in typed.items()
            if name not in dropped or name not in properties}  # fmt: skip


def _typed(value: Any, schema: Mapping[str, Any], said: Evidence) -> Any:
    kind = _TYPES.get(str(schema.get("type", "")).lower())
    if isinstance(value, bool):
        return value
    if kind == "array" and isinstance(value, list):
        items = schema.get("items")
        return [_typed(v, items, said) for v in value] if isinstance(items, Mapping) else value
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "number" and isinstance(value, int | float):
        description = str(schema.get("description", "")).lower()
        decimal = re.search(r"\bdecimal\b|\bfraction\b|between 0 and 1", description)
        if decimal and "percent" not in description and 1 < value <= 100 \
                and float(value) in said.percents:  # fmt: skip
            return value / 100
        return float(value)
    return value


# ------------------------------------------------------------------ reading answers


def _weighed(answer: ChatAnswer, chosen: str | None, none: str, favoured: str | None,
             *, over_none: bool = True) -> str | None:  # fmt: skip
    """The model's choice (``None``: none) once its log-probabilities are read: none
    when it was about as likely as the chosen tool (:data:`NONE_MARGIN`), the favoured
    tool unless the choice leads it clearly (:data:`FAVOURED_MARGIN`) — against a
    choice of none only ``over_none``."""
    if chosen is not None:
        against = _margin(answer, none, chosen)
        if against is not None and against >= -NONE_MARGIN:
            chosen = None
    if favoured is not None and chosen != favoured and (chosen is not None or over_none):
        lead = _margin(answer, chosen or none, favoured)
        if lead is not None and lead < FAVOURED_MARGIN:
            chosen = favoured
    return chosen


def _margin(answer: ChatAnswer, name: str, other: str) -> float | None:
    """log P(name) − log P(other) where the two names part, read from the alternatives
    the server returned for each token of the choice's value: at its first token for
    two unlike names, further on for two that begin alike ("product-search" and
    "product-compare" part after "product-"), following the value the model wrote.
    +inf when only ``name`` is among the alternatives there, −inf when only ``other``
    is; ``None`` when they cannot be told apart (the model's own choice then stands)."""
    found = _value_start(answer)
    if found is None:
        return None
    at, start = found
    for index, offset in _spelled(answer):
        if index < at:
            continue
        prefix = answer.text[start:offset]
        if not (name.startswith(prefix) and other.startswith(prefix)):
            return None
        alternatives = answer.top_logprobs[index]
        mine = _likeliest(alternatives, prefix, name, other)
        theirs = _likeliest(alternatives, prefix, other, name)
        if mine > -math.inf or theirs > -math.inf:
            return mine - theirs  # ±inf when only one of them is among the alternatives
    return None


def _likeliest(alternatives: Sequence[TokenLogprob], prefix: str, one: str, two: str) -> float:
    """The log-probability of the likeliest alternative that goes on from ``prefix``
    along the name ``one`` and not along ``two``; −inf when there is none."""
    found = [
        a.logprob
        for a in alternatives
        if (piece := prefix + (a.token if prefix else a.token.lstrip())) != prefix
        and _along(one, piece)
        and not _along(two, piece)
    ]
    return max(found, default=-math.inf)


def _along(name: str, piece: str) -> bool:
    """Whether ``piece`` of a choice's JSON value spells the start of ``name`` (its
    last token may run on into the closing quote)."""
    whole = f'{name}"'
    return whole.startswith(piece) or piece.startswith(whole)


def _value_start(answer: ChatAnswer) -> tuple[int, int] | None:
    """The index of the generated token where the ``tool`` value's text begins, and
    that text's offset in the answer; ``None`` when the alternatives do not spell the
    text up to there."""
    found = _CHOICE_VALUE.match(answer.text)
    if found is None:
        return None
    for index, offset in _spelled(answer):
        if offset >= found.end():
            return (index, offset) if offset == found.end() else None
    return None


def _spelled(answer: ChatAnswer) -> Iterator[tuple[int, int]]:
    """Each generated token's index and the offset in the answer's text where it
    begins, the text walked token by token, each token being the likeliest alternative
    that matches the text there; the walk stops where none does."""
    text, offset = answer.text, 0
    for index, alternatives in enumerate(answer.top_logprobs):
        yield index, offset
        matching = [a for a in alternatives if a.token and text.startswith(a.token, offset)]
        if not matching:
            return
        offset += len(max(matching, key=lambda a: a.logprob).token)


def _chosen(
    answer: ChatAnswer, names: Sequence[str], none: str
) -> str | tuple[ToolCall, ...] | None:
    """The tool chosen, ``None`` for none, or calls the server wrote instead."""
    if answer.tool_calls:
        return tuple(c for c in answer.tool_calls if c.name in names) or None
    value = answer.json.get("tool") if isinstance(answer.json, Mapping) else None
    if isinstance(value, str) and value in names:
        return value
    if value == none:
        return None
    calls = parse_calls(answer.text, names)
    if calls:
        return calls
    # A server that ignored the schema and named a tool in words.
    named = [n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", answer.text)]
    return named[0] if len(named) == 1 else None


def _calls_of(answer: ChatAnswer, names: Sequence[str]) -> tuple[ToolCall, ...]:
    value = answer.json
    if value is None:
        return parse_calls(answer.text, names)
    return tuple(_read_calls(value, names))


def _call_budget(messages: Sequence[Message], tools: Sequence[Tool], count: int) -> int:
    """The most tokens ``count`` calls can take when every value is the conversation's."""
    stated = sum(len(m.content) for m in messages)
    widest = max((len(t.name) + PARAMETER_TOKENS * _width(t) for t in tools), default=0)
    return count * (CALL_TOKENS + widest) + stated


def _width(tool: Tool) -> int:
    properties = tool.parameters.get("properties")
    return len(properties) if isinstance(properties, Mapping) else 0


def _whole_part(text: str) -> Any:
    """An answer cut off at its budget, read as far as it is whole: the member being
    written when it was cut is left out (a value cut short must not be called as if it
    were the whole), so a required one is missing and grounding says so."""
    try:
        value = partial_loads(text, Allow.ALL)
    except (ValueError, IndexError, RecursionError, AssertionError):
        # garbage, not a cut call; the parser asserts on some ("{,0")
        return None
    calls = value if isinstance(value, list) else [value]
    if not calls or not isinstance(calls[-1], Mapping):
        return value
    last = dict(calls[-1])
    last["arguments"] = _without_last(last.get("arguments"))
    return [*calls[:-1], last]


def _without_last(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {}
    return dict(list(value.items())[:-1])


def parse_calls(text: str, names: Sequence[str]) -> tuple[ToolCall, ...]:
    """Calls to ``names`` written as text: JSON objects ``{"name", "arguments"}`` (or
    ``parameters``, or OpenAI's ``{"function": {…}}``), lists of them, bare, fenced or
    between ``<tool_call>`` tags. Anything else, or a call to a name not offered, is
    not a call."""
    pieces = _TAGGED.findall(text) or _FENCED.findall(text)
    calls = _calls_in(pieces, names)
    # No tags or fences, or a fence inside a JSON string cut the call short: the whole
    # text is read instead.
    return calls or _calls_in([text], names)


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json|JSON|tool_call)?\s*\n?(.*?)```", re.S)


def _calls_in(pieces: Sequence[str], names: Sequence[str]) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for value in (found for piece in pieces for found in json_in(piece)):
        calls.extend(_read_calls(value, names))
        if len(calls) >= MAX_CALLS:
            break
    return tuple(calls[:MAX_CALLS])


def _read_calls(value: Any, names: Sequence[str]) -> Iterator[ToolCall]:
    if isinstance(value, list):
        for item in value[:MAX_CALLS]:
            yield from _read_calls(item, names)
        return
    if not isinstance(value, Mapping):
        return
    if isinstance(value.get("function"), Mapping):
        value = value["function"]
    if isinstance(value.get("tool_calls"), list):
        yield from _read_calls(value["tool_calls"], names)
        return
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return
    if isinstance(name, str) and name in names and isinstance(arguments, Mapping):
        yield ToolCall(name, dict(arguments))


def _merged(
    answers: Sequence[ChatAnswer], last: ChatAnswer, calls: Sequence[ToolCall], started: float
) -> ChatAnswer:
    usage = Usage(
        sum(a.usage.prompt_tokens for a in answers),
        sum(a.usage.completion_tokens for a in answers),
    )
    numbered = tuple(
        ToolCall(c.name, c.arguments, c.id or f"call_{i}") for i, c in enumerate(calls)
    )
    return replace(
        last,
        text="" if numbered else last.text,
        json=None if numbered else last.json,
        tool_calls=numbered,
        finish_reason="tool_calls" if numbered else last.finish_reason,
        usage=usage,
        duration_ms=(time.perf_counter() - started) * 1000,
        attempts=sum(a.attempts for a in answers),
        llm_calls=sum(a.llm_calls for a in answers),
    )
