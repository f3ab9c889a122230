"""The candidates of one step: the top-k operations the caller may call.

Discovery searches with the caller's rights as its filter, so an operation the caller
may not call is never offered, whatever the message or an earlier tool output says. It
searches the ``tool`` family only: a reasoning family's methods (seed detection, KB
retrieval and its ingestion hooks, goal solving, validation, planning) take the
reasoning flow's envelope and answer its stage statuses, and ``reason`` runs them in
order. Offered to a request, they answered it wrongly: the model sent a request's quoted
text to a KB's ``on_source_text`` hook, and "Create a new Google Doc called Budget" found
a goal solver first, which answers anything.

Discovery answers with one match per plugin, named by the plugin's best entry. When a
plugin matches, every operation of it the caller may call is a candidate: the best
entry is often a sibling of the operation that does the job ("6 ft to meters" matched
``unit-convert``'s "List units" entry above "Convert a quantity"), and the relevance
floor judged the plugin, not each operation. A sibling that requires a value of a kind
the request states none of (:func:`unstated_kinds`: a time of day, a JSON document)
comes after the others: "I'm calling Honolulu; what hour is it for them?" took
``convert_time``, whose example says "hour", and the model invented the time it needs.
"now" is no time of day here: ``convert_time`` takes it, but a request for the time
"right now" in one place is ``now``'s. Of the rest, one that takes a value of a kind the
request states comes first (:func:`stated_kinds`): 'How many sales are above 100 in
{"sales": …}?' writes a document that ``query`` takes and ``check_expression`` does not.
Then the siblings are ordered by the request's
words found in each operation's own text — its name, description, parameter names and
examples — counting only the words that tell the siblings apart (not a name the request
capitalises mid-sentence: "Cairo" is a value, whichever example mentions it), discovery's
own pick breaking ties; each sits :data:`SIBLING_GAP` below the one before it, so another
plugin's close match can come between them. When the request states a value to work
on — a number or a quoted text — an operation that requires none (a listing such as
``list_units``, or "the current time") never comes before a sibling that requires
values to do its job; and one that could not even take the value (it has no parameter,
or only ones limited to an enum: ``list_units``' ``category``) is not offered at all — a
small model still picked ``list_units`` for "how many pounds is 70 kg?" when it was
offered last (bench/labs/ASK_LAB.md). When the request states no value, of siblings its
words tell apart no better the one requiring fewer arguments comes first.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from plugyard.discovery.query import CanSee, Filters, Match
from plugyard.llm.grounding import takes_clock
from plugyard.llm.stated import USER_JSON_TRIES, clocks_in, json_spans, proper_names_in, words_in
from plugyard.manifest.model import Operation
from plugyard.routing.choice import Candidate

Search = Callable[[str, int, Filters], Sequence[Match]]

#: Score between consecutive siblings of one plugin (retrieval's fused scores are
#: z-scores summed over channels; a close match scores within about 0.5 of the best).
SIBLING_GAP = 0.3
#: A candidate scoring this far below the best is not offered. Every operation offered
#: is read by the model before each decision (about 200 prompt tokens each, the bulk of
#: an ask's time on a CPU), and one this far behind was the labelled tool for 4 of 297
#: MetaTool and 2 of 300 Seal-Tools queries (where the model never picked a later
#: candidate than the first), while it halves what is offered (bench/labs/ASK_LAB.md).
OFFER_GAP = 2.5
#: The family whose operations serve a request: the others are the reasoning flow's.
OFFERED_FAMILY = "tool"
#: Words that say nothing about which operation is meant.
_COMMON = frozenset({
    "a", "an", "the", "is", "are", "was", "be", "it", "its", "this", "that", "of", "in",
    "on", "at", "to", "for", "from", "by", "with", "and", "or", "as", "me", "my", "i",
    "you", "your", "we", "what", "how", "many", "much", "do", "does", "can", "please",
    "tell", "give", "there",
})  # fmt: skip
#: A value the request states: a number (digits or a number word) or a quoted text.
_STATED = re.compile(
    r"\d|[\"“”‘’']\S.*?[\"“”‘’']|\b(one|two|three|four|five|six|seven|eight|nine|ten|"
    r"hundred|thousand|dozen|half|quarter|noon|midnight)\b",
    re.IGNORECASE,
)


class Teacher(Protocol):
    """How the flow lets discovery learn (docs/discovery.md): it searches as the
    subject, then reports the operation that answered, by the search's id."""

    def search(self, query: str, k: int, filters: Filters, subject: str) -> Sequence[Match]: ...

    def accepted(self, search_id: str, subject: str, plugin_id: str, operation: str) -> None: ...


def retrieve(search: Search, query: str, k: int, can_see: CanSee) -> tuple[Candidate, ...]:
    """At most ``k`` operations, best first: the operations the caller may call of
    each plugin that matched above the relevance floor, within :data:`OFFER_GAP` of the
    best, so an empty answer means nothing relevant."""
    found: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    filters = Filters(family=OFFERED_FAMILY, can_see=can_see, relevant_only=True)
    for match in search(query, k, filters):
        descriptor = match.plugin.descriptor
        usable = [
            op
            for op in descriptor.operations
            if (descriptor.id, op.id) not in seen and can_see(descriptor.id, op.id)
        ]
        for rank, operation in enumerate(siblings(query, usable, match.operation)):
            seen.add((descriptor.id, operation.id))
            found.append(Candidate(descriptor.id, operation, match.score - SIBLING_GAP * rank,
                                   descriptor.description, descriptor.name or "",
                                   descriptor))  # fmt: skip
    found.sort(key=lambda c: -c.score)  # stable: equal scores keep discovery's order
    if found:
        found = [c for c in found if c.score >= found[0].score - OFFER_GAP]
    return tuple(_ties_to_stated(found, query)[:k])


def _ties_to_stated(found: list[Candidate], query: str) -> list[Candidate]:
    """``found`` with a candidate that takes a kind of value the request states moved
    ahead of one that takes none and scores less than :data:`SIBLING_GAP` above it:
    'From {"forecast": […]}, which cities have a high above 10 degrees?' put the
    time-zone plugin (3.07, "cities") before the JSON query (3.03)."""
    takes = [bool(stated_kinds(c.operation, query)) for c in found]
    moved = True
    while moved:
        moved = False
        for i in range(1, len(found)):
            if (takes[i] and not takes[i - 1]
                    and found[i - 1].score - found[i].score < SIBLING_GAP):  # fmt: skip
                found[i - 1], found[i] = found[i], found[i - 1]
                takes[i - 1], takes[i] = takes[i], takes[i - 1]
                moved = True
    return found


def siblings(query: str, operations: Sequence[Operation],
             matched: str | None = None) -> list[Operation]:  # fmt: skip
    """The operations of one plugin, the likeliest for ``query`` first (the module's
    notes); ``matched`` is the one discovery named."""
    if len(operations) < 2:
        return list(operations)
    texts = [set(words_in(operation_text(op))) for op in operations]
    # A name the request states ("Cairo") is a value: it tells no more which operation is
    # meant than an example of another operation naming the same city does.
    named = {w for name in proper_names_in(query) for w in words_in(name)}
    wanted = {w for w in words_in(query) if w not in _COMMON and w not in named and len(w) > 1}
    counts = {w: sum(w in t for t in texts) for w in wanted}

    def telling(index: int) -> float:
        # A word every sibling has tells nothing; one only this sibling has counts 1.
        shared = len(operations)
        return sum((shared - counts[w]) / (shared - 1) for w in wanted if w in texts[index])

    job = _STATED.search(query) is not None and any(map(takes_values, operations))
    kept = [i for i, op in enumerate(operations) if not job or takes_values(op) or holds_values(op)]
    # With no value stated, of two siblings the request's words tell apart no better,
    # the one it can fill comes first: "What time is it in Paris?" names a zone, which
    # `now` needs, and no time, which `convert_time` needs as well.
    unfilled = [len(unstated_kinds(op, query)) for op in operations]
    filled = [len(stated_kinds(op, query)) for op in operations]
    order = sorted(
        kept,
        key=lambda i: (
            unfilled[i],
            -filled[i],
            job and not takes_values(operations[i]),
            -telling(i),
            0 if job else required_count(operations[i]),
            operations[i].id != matched,
        ),
    )
    return [operations[i] for i in order]


def unstated_kinds(operation: Operation, query: str) -> list[str]:
    """The operation's required parameters of a kind the request states no value of: a
    time of day where it states none, a JSON document where it writes none. A text may
    be any of the request's words and a number may be the 1 it implies ("convert feet
    to meters"), so neither is counted."""
    required = operation.parameters.get("required")
    wanted = set(required) if isinstance(required, list) else set()
    return [name for name, stated in _kinds(operation, query) if name in wanted and not stated]


def stated_kinds(operation: Operation, query: str) -> list[str]:
    """The operation's parameters, required or not, of a kind the request states a value
    of: a time of day, a JSON document."""
    return [name for name, stated in _kinds(operation, query) if stated]


def _kinds(operation: Operation, query: str) -> list[tuple[str, bool]]:
    """Each parameter of a kind told apart (a time of day, a JSON document), and whether
    the request states a value of it."""
    properties = operation.parameters.get("properties")
    if not isinstance(properties, dict):
        return []
    clock, document = _states(query)
    found = []
    for name, schema in properties.items():
        if not isinstance(schema, dict):
            continue
        if takes_clock(schema):
            found.append((str(name), clock))
        elif _takes_document(schema):
            found.append((str(name), document))
    return found


@functools.lru_cache(maxsize=32)
def _states(query: str) -> tuple[bool, bool]:
    """Whether the request states a time of day, and whether it writes a JSON document:
    read once per request, not once per parameter of every candidate (siblings and the
    ties between plugins both ask)."""
    return bool(clocks_in(query)), _writes_document(query)


def _takes_document(schema: Mapping[str, Any]) -> bool:
    """The parameter takes a JSON document: an object, an array of anything but plain
    values (text-extract's ``kinds`` is a list of names), or a value of any type its
    description calls JSON (json-query's ``data``, "any JSON value")."""
    kind, items = schema.get("type"), schema.get("items")
    if kind == "object":
        return True
    if kind == "array":
        plain = isinstance(items, dict) and items.get("type") in (
            "string",
            "number",
            "integer",
            "boolean",
        )
        return not plain
    return kind is None and "json" in str(schema.get("description", "")).lower()


def _writes_document(query: str) -> bool:
    """The request writes a JSON document: one standing on its own, not the index of an
    expression ("sort_by(people, &age)[-1].name" writes the array ``[-1]``)."""
    return any(
        start == 0 or not (query[start - 1].isalnum() or query[start - 1] in "_)]}.")
        for start, _, _ in json_spans(query, tries=USER_JSON_TRIES)
    )


def holds_values(operation: Operation) -> bool:
    """Some parameter of the operation could take a value the request states: one not
    limited to an enum (or a constant)."""
    properties = operation.parameters.get("properties")
    if not isinstance(properties, dict):
        return False
    return any(
        isinstance(schema, dict) and "enum" not in schema and "const" not in schema
        for schema in properties.values()
    )


def takes_values(operation: Operation) -> bool:
    """The operation requires at least one argument: it does a job with the request's
    values, where one that requires none lists or looks something up."""
    return required_count(operation) > 0


def required_count(operation: Operation) -> int:
    required = operation.parameters.get("required")
    return len(required) if isinstance(required, list) else 0


def operation_text(operation: Operation) -> str:
    """The operation's own words: id, name, description, parameters (their names,
    defaults and enums), examples and what it returns. A parameter's description says
    what value to write, not what the operation does: `now`'s "the place, as the request
    names it (… an IANA zone …)" made "what are their IANA names?" a request for the
    current time."""
    parts = [operation.id.replace("_", " "), operation.name or "", operation.description]
    properties = operation.parameters.get("properties")
    if isinstance(properties, dict):
        for name, spec in properties.items():
            parts.append(str(name).replace("_", " "))
            if isinstance(spec, dict):
                enum = spec.get("enum")
                values = [spec.get("default")]
                values += enum if isinstance(enum, list) else []
                parts += [str(v) for v in values if isinstance(v, str | int | float)]
    parts += [str(example) for example in operation.examples]
    if operation.output_description:  # what it answers: "whether it is valid"
        parts.append(operation.output_description)
    return " ".join(parts)
