"""Safe arithmetic: Python's expression grammar, parsed with ``ast``, a whitelist of nodes.

Text that is not in that grammar ("17.5% of 240", "10 factorial", "seven squared plus
three squared") is read by :mod:`.words` into the same nodes, then checked the same way.

Nothing is ever passed to ``eval``: names are looked up in a table of constants and math
functions, attributes, subscripts, comprehensions and every other node are refused. The
work is bounded: the text's length, the number of nodes, and the size of integers (a
power is refused before it is computed when its result would be too large).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from .words import Unreadable, read

MAX_LENGTH = 1_000
MAX_NODES = 400
MAX_INT_BITS = 1_023  # about 308 decimal digits: every result also fits a float
MAX_FACTORIAL = 170  # 171! no longer fits
Number = int | float


class CalculationError(ValueError):
    """The expression is not one this calculator evaluates; ``details`` says where the
    text could not be read, when that is why."""

    code = "invalid_parameters"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


def _log(x: Number, base: Number | None = None) -> float:
    # log(1000, 10) is 2.9999999999999996 by the change of base; log10 is exact
    if base == 10:
        return math.log10(x)
    if base == 2:
        return math.log2(x)
    return math.log(x) if base is None else math.log(x, base)


def _factorial(n: Number) -> int:
    if not float(n).is_integer() or n < 0:
        raise CalculationError("factorial() takes a whole number ≥ 0")
    if n > MAX_FACTORIAL:
        raise CalculationError(f"factorial() is limited to n ≤ {MAX_FACTORIAL}")
    return math.factorial(int(n))


def _round(x: Number, digits: Number = 0) -> Number:
    return round(x, int(digits)) if digits else round(x)


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt, "cbrt": math.cbrt, "exp": math.exp, "ln": math.log, "log": _log,
    "log10": math.log10, "log2": math.log2, "sin": math.sin, "cos": math.cos,
    "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "degrees": math.degrees, "radians": math.radians, "abs": abs, "round": _round,
    "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "factorial": _factorial,
    "gcd": math.gcd, "lcm": math.lcm, "hypot": math.hypot, "min": min, "max": max,
}  # fmt: skip
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _power(base: Number, exponent: Number) -> Number:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base) > 1
        and (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS
    ):
        raise CalculationError("the result of that power is too large")
    try:
        result = base**exponent
    except ZeroDivisionError:
        raise CalculationError("zero cannot be raised to a negative power") from None
    if isinstance(result, complex):
        raise CalculationError("that power has no real result")
    return result


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Number]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: _power,
}  # fmt: skip
_UNARY: dict[type[ast.unaryop], Callable[[Any], Number]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def parse(expression: str) -> ast.expr:
    """``expression`` as a tree of the evaluator's grammar: as written when it is one
    (only known names), else read from words; :class:`CalculationError` when neither."""
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        # '^' is a power, as calculators read it. Rewritten before parsing: read as
        # Python's XOR it would bind looser than '*' ('2 * 3^2' would be 36, not 18).
        body: ast.expr | None = ast.parse(expression.strip().replace("^", "**"), mode="eval").body
    except (SyntaxError, ValueError):  # ValueError: a NUL character
        body = None
    if body is None or not _readable(body):
        try:
            body = read(expression, list(FUNCTIONS))
        except Unreadable as exc:
            raise CalculationError(
                f"not an arithmetic expression: {exc}",
                {"word": exc.word, "position": exc.position},
            ) from None
    if sum(1 for _ in ast.walk(body)) > MAX_NODES:
        raise CalculationError("the expression is too long")
    return body


def formula(expression: str) -> str:
    """The expression as the evaluator reads it, in its own grammar."""
    return ast.unparse(parse(expression))


def evaluate(expression: str) -> Number:
    """The value of ``expression``; :class:`CalculationError` for anything else."""
    tree = parse(expression)
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise CalculationError("division by zero") from None
    except OverflowError:
        raise CalculationError("the result is too large") from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CalculationError):
            raise
        raise CalculationError(f"math error: {exc}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    return value


def _readable(tree: ast.expr) -> bool:
    """Written in the grammar: known names only, and no tuple ("1,234 + 1" is a number
    with a thousands separator, not a pair)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple):
            return False
        if isinstance(node, ast.Name) and node.id not in CONSTANTS and node.id not in FUNCTIONS:
            return False
    return True


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return node.value
        raise CalculationError(f"{node.value!r} is not a number")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _checked(_BINARY[type(node.op)](_eval(node.left), _eval(node.right)))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise CalculationError(f"unknown name {node.id!r}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise CalculationError(f"unknown function {ast.unparse(node.func)!r}")
        if node.keywords:
            raise CalculationError("functions take positional arguments only")
        return _checked(FUNCTIONS[node.func.id](*(_eval(arg) for arg in node.args)))
    raise CalculationError(f"{type(node).__name__} is not allowed in an expression")


def _checked(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculationError("the result is too large")
    return value
