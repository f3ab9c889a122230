"""One grammar for every command: ``--json`` prints JSON (for programs), and without it
the same data is printed for people; JSON going *in* always comes with ``--input``.

The human form is YAML (block style, keys in their order): it shows nested data without
braces and quotes, and it is still exact enough to copy from.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from plugyard.execution.result import Result

F = TypeVar("F", bound=Callable[..., Any])

#: ``--json``: print JSON instead of the human form.
json_option: Callable[[F], F] = click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (for programs) instead of text."
)


def input_option(what: str) -> Callable[[F], F]:
    """``--input '{...}'``: a JSON object going in (``-`` reads it from stdin)."""
    return click.option("--input", "body", metavar="'{...}'", help=f"{what}, as one JSON object.")


def read_input(body: str | None) -> dict[str, Any]:
    if not body:
        return {}
    text = sys.stdin.read() if body == "-" else body
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--input") from None
    if not isinstance(loaded, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--input")
    return loaded


def emit(data: Any, as_json: bool) -> None:
    """``data`` as JSON, or for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    plain = json.loads(json.dumps(data, default=str))  # tuples, dates … as JSON sees them
    if plain is None or plain == [] or plain == {}:
        click.echo("(nothing)")
        return
    import yaml  # only for people's output: a listing prints its own lines

    text = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True, default_flow_style=False)
    click.echo(text.rstrip("\n"))


def emit_result(result: Result, as_json: bool) -> None:
    """An executor's result as ``plugyard call`` prints it: the whole envelope as JSON,
    else the error on stderr or the data (a status other than success named first);
    exits 1 unless the call succeeded."""
    if as_json:
        emit(result.to_dict(), True)
    elif result.error is not None:
        click.echo(f"{result.status}: {result.error.code}: {result.error.message}", err=True)
    else:
        if result.status != "success":
            click.echo(f"{result.status}:", err=True)  # pending_approval, a family status …
        emit(result.data, False)
    if not result.ok:
        sys.exit(1)


def fail(code: str, message: str, as_json: bool, status: int = 1) -> None:
    """A refusal: the error envelope's code and message (JSON on stdout with ``--json``,
    else one line on stderr), then exit ``status``."""
    if as_json:
        emit({"error": {"code": code, "message": message}}, True)
    else:
        click.echo(f"error: {code}: {message}", err=True)
    sys.exit(status)
