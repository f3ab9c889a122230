"""A CONDITION: a safe expression over the pipeline context decides whether a group runs.

The expression is parsed with ``ast`` and only comparisons, boolean logic, literals,
names, dotted attributes, constant indexes and four functions are evaluated — never
``eval``. A name the context lacks reads as null, and an ordering comparison with null
(or between values of different kinds) is false, so a missing field never fails a run.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

MAX_LENGTH = 500
MAX_NODES = 200
_MISSING = None
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "len": len,
    "lower": lambda s: str(s).lower(),
    "upper": lambda s: str(s).upper(),
    "abs": abs,
}
_LITERALS = {"true": True, "false": False, "null": None, "none": None}


class InvalidExpression(ValueError):
    code = "invalid_parameters"


class ExpressionCondition:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        scope = params.get("context")
        if not isinstance(scope, dict):
            raise InvalidExpression("'context' must be an object")
        expression, field = params.get("expression"), params.get("field")
        if isinstance(expression, str) and expression.strip():
            return {"result": bool(evaluate(expression, scope))}
        if isinstance(field, str) and field.strip():
            return {"result": bool(lookup(scope, field.strip().split(".")))}
        raise InvalidExpression("give an 'expression' or a 'field'")

    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]


def evaluate(expression: str, scope: dict[str, Any]) -> Any:
    if len(expression) > MAX_LENGTH:
        raise InvalidExpression(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise InvalidExpression(f"not an expression: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise InvalidExpression("the expression is too long")
    return _eval(tree.body, scope)


def lookup(scope: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(scope, dict):
            scope = scope.get(part, _MISSING)
        elif isinstance(scope, list) and part.lstrip("-").isdigit():
            index = int(part)
            scope = scope[index] if -len(scope) <= index < len(scope) else _MISSING
        else:
            return _MISSING
    return scope


def _eval(node: ast.AST, scope: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        return _LITERALS.get(node.id.lower(), _MISSING)
    if isinstance(node, ast.Attribute):
        return lookup(_eval(node.value, scope), [node.attr])
    if isinstance(node, ast.Subscript):
        key = _eval(node.slice, scope)
        return lookup(_eval(node.value, scope), [str(key)])
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(item, scope) for item in node.elts]
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, scope) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub) and isinstance(value, int | float):
            return -value
        raise InvalidExpression("only 'not' and '-' apply to single values")
    if isinstance(node, ast.Compare):
        left = _eval(node.left, scope)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, scope)
            if not _compare(_COMPARE[type(op)], left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        function = _FUNCTIONS.get(node.func.id)
        if function is None or len(node.args) != 1 or node.keywords:
            raise InvalidExpression(f"unknown function {node.func.id!r}")
        try:
            return function(_eval(node.args[0], scope))
        except TypeError:
            return _MISSING
    raise InvalidExpression(f"{type(node).__name__} is not allowed in a condition")


def _compare(op: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    try:
        return bool(op(left, right))
    except TypeError:
        return False  # null, or values of different kinds, never order
