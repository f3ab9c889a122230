"""JMESPath queries, declared with plugyard's decorator: the signatures, docstrings and
return types below give the same descriptor as plugin.yaml, plus output schemas."""

from __future__ import annotations

from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

from plugyard.runtimes.python import plugin

MAX_EXPRESSION = 2_000

json_query = plugin(
    "json-query",
    name="JSON Query",
    description=(
        "Selects, filters and reshapes JSON data with JMESPath expressions. Use it to pick "
        "fields out of an API response, filter a list by a condition, or count, sort and "
        "project values without writing code."
    ),
    description_long=(
        "JMESPath is the query language of the AWS CLI: orders[?total > `100`].id filters "
        "and projects, length(items) counts, sort_by(items, &price)[0] finds the cheapest, "
        "{name: name, total: sum(orders[].amount)} reshapes."
    ),
)


class InvalidInput(ValueError):
    code = "invalid_parameters"


class QueryResult(TypedDict):
    result: Any
    found: bool


class ExpressionCheck(TypedDict):
    valid: bool
    error: str | None


@json_query.operation(
    name="Query JSON",
    inline=True,
    examples=(
        "get the names of everyone older than 30 from this JSON",
        "filter this list of orders to the ones over 100 dollars",
        "count how many items are in this API response",
        "which product in this JSON is the cheapest",
    ),
)
def query(data: Any, expression: str) -> QueryResult:
    """Evaluates a JMESPath expression against a JSON document.

    Args:
        data: The JSON document to query (any JSON value).
        expression: A JMESPath expression, e.g. orders[?total > `100`].id.

    Returns:
        The value the expression selects, null when nothing matches.
    """
    compiled = _compiled(expression)
    try:
        result = compiled.search(data)
    except JMESPathError as exc:
        raise InvalidInput(f"cannot evaluate {expression!r}: {exc}") from None
    return {"result": result, "found": result is not None}


@json_query.operation(
    name="Check a JMESPath expression",
    inline=True,
    examples=(
        "will orders[?total < `50`].id parse as JMESPath",
        "check my JMESPath query before I run it",
        "why does this JMESPath expression fail",
    ),
)
def check_expression(expression: str) -> ExpressionCheck:
    """Tells whether a JMESPath expression is well-formed, and why not.

    Args:
        expression: The expression to check.

    Returns:
        Whether it is valid, and the parse error when it is not.
    """
    try:
        _compiled(expression)
    except InvalidInput as exc:
        return {"valid": False, "error": str(exc)}
    return {"valid": True, "error": None}


def _compiled(expression: str) -> Any:
    if len(expression) > MAX_EXPRESSION:
        raise InvalidInput(f"the expression is longer than {MAX_EXPRESSION} characters")
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise InvalidInput(f"not a JMESPath expression: {exc}") from None
