"""The calculator, a Shu-style plugin class: ``execute(params, context, host)`` and its
schemas. It answers Shu ``ToolResult`` envelopes: bad input is an error result, not an
exception."""

from __future__ import annotations

from typing import Any

from .evaluator import CONSTANTS, FUNCTIONS, MAX_LENGTH, CalculationError, evaluate, formula

#: Integers beyond this are given as floats in ``result`` (JSON readers lose precision
#: past it) and exactly in ``text``.
SAFE_INTEGER = 2**53


class CalculatorPlugin:
    name = "calculator"
    version = "1.0.0"

    def get_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "expression": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_LENGTH,
                    "description": (
                        "The calculation, copied as the request words it: words are "
                        "read ('half of 90', '3 cubed minus 1', 'average of 4, 8 "
                        "and 9', 'twelve times eleven'). Or an "
                        "arithmetic expression: numbers, + - * / // % ** (or ^), "
                        "parentheses, the constants pi, e, tau and the functions "
                        f"{', '.join(sorted(FUNCTIONS))}, with the request's own numbers."
                    ),
                },
                "precision": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 15,
                    "description": "Round the result to this many decimal places.",
                },
            },
            "required": ["expression"],
        }

    def get_output_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "The expression evaluated."},
                "read_as": {
                    "type": "string",
                    "description": "The expression in the calculator's own grammar, as read.",
                },
                "result": {"type": "number", "description": "Its value."},
                "text": {"type": "string", "description": "The value as text, exact."},
                "is_integer": {"type": "boolean"},
            },
            "required": ["expression", "read_as", "result", "text", "is_integer"],
        }

    def requires_permission(self) -> list[str]:
        return []

    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        expression = str(params.get("expression", ""))
        try:
            read_as = formula(expression)
            value = evaluate(read_as)
        except CalculationError as exc:
            error = {"code": exc.code, "message": str(exc), "details": exc.details}
            return {"status": "error", "error": error}
        precision = params.get("precision")
        if isinstance(value, float):
            # 15 significant digits hide binary noise: 0.1 + 0.2 reads 0.3
            value = float(f"{value:.15g}")
            if isinstance(precision, int):
                value = round(value, precision)
        is_integer = isinstance(value, int) or value.is_integer()
        result = float(value) if isinstance(value, int) and abs(value) > SAFE_INTEGER else value
        text = str(value) if isinstance(value, int) else f"{value:.15g}"
        data = {"expression": expression, "read_as": read_as, "result": result, "text": text,
                "is_integer": is_integer}  # fmt: skip
        return {"status": "success", "data": data}

    # known-short and bounded: run on the event loop, no thread hop
    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]


__all__ = ["CONSTANTS", "CalculatorPlugin"]
