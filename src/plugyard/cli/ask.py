"""``plugyard ask``: route a request to the plugins and answer it (docs/routing.md).

The model is ``PLUGYARD_LLM`` (docs/llm.md). Each step is printed as it finishes, then
the answer; with ``--json`` only the whole answer with its trace is printed. Without
``--subject`` the command acts for the operator who holds the database (the admin
role), as ``plugyard call`` does.

``plugyard confirm RECEIPT`` runs a call an ask held back (``pending_confirmation``),
for the subject it was held for (``--subject``, as for ``ask``).
"""

from __future__ import annotations

import asyncio
import json
import sys

import click

from plugyard.cli.output import emit, emit_result, json_option
from plugyard.cli.plugins import open_yard
from plugyard.routing import Answer, Step
from plugyard.routing.flow import DEFAULT_K, DEFAULT_MAX_STEPS


def _offered(step: Step) -> str:
    return ", ".join(f"{r.plugin}.{r.operation} ({r.score:.2f})" for r in step.retrieved)


def _print_step(step: Step) -> None:
    offered = _offered(step)
    click.echo(f"step {step.number}: offered {offered or 'nothing'}")
    choice = step.choice
    if choice is None or "plugin" not in choice:
        chose = "none of these" if choice is not None else "no choice"
    else:
        arguments = json.dumps(choice["arguments"], ensure_ascii=False)
        chose = f"{choice['plugin']}.{choice['operation']} {arguments}"
    code = f" ({step.error_code})" if step.error_code else ""
    repaired = ", after a repair round" if step.repaired else ""
    click.echo(f"  chose {chose} → {step.status}{code}{repaired}; "
               f"model calls {step.llm_calls}, tokens {step.tokens}, {step.ms:.0f} ms")  # fmt: skip


def _print_answer(answer: Answer) -> None:
    click.echo(f"{answer.status}:")
    click.echo(answer.text)
    if answer.pending is not None:
        receipt = answer.pending.get("receipt")
        click.echo(f"action {answer.pending.get('action_id')}, receipt {receipt}")
        if answer.status == "pending_confirmation" and receipt:
            click.echo(f"to run it: plugyard confirm {receipt}")
    cost = answer.cost
    click.echo(f"(model calls {cost.get('llm_calls', 0)}, tokens {cost.get('tokens', 0)}, "
               f"tool calls {cost.get('tool_calls', 0)})", err=True)  # fmt: skip


@click.command("ask")
@click.argument("message")
@click.option("--k", "k", type=int, default=DEFAULT_K, show_default=True,
              help="Candidate operations offered to the model per step.")  # fmt: skip
@click.option("--max-steps", type=int, default=DEFAULT_MAX_STEPS, show_default=True,
              help="At most this many tool calls.")  # fmt: skip
@click.option("--subject", help="Ask as this subject (default: the operator, as admin).")
@click.option("--role", "roles", multiple=True, help="A role vouched for the subject.")
@click.option("--dry-run", is_flag=True, help="Choose the first call, do not make it.")
@json_option
@click.pass_context
def ask_command(
    ctx: click.Context,
    message: str,
    k: int,
    max_steps: int,
    subject: str | None,
    roles: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
) -> None:
    """Answer MESSAGE with the plugins: find the operations you may call, let the model
    choose one, call it under policy and approvals, and print each step and the answer.
    Exits 1 when the answer is an error."""
    with open_yard(ctx) as yard:
        on_step = None if as_json else _print_step
        vouched = roles if subject else None
        asked = yard.ask(message, subject=subject, roles=vouched, k=k, max_steps=max_steps,
                         on_step=on_step, dry_run=dry_run)  # fmt: skip
        answer = asyncio.run(asked)
    if as_json:
        emit(answer.to_dict(), True)
    else:
        _print_answer(answer)
    if answer.status == "error":
        sys.exit(1)


@click.command("confirm")
@click.argument("receipt")
@click.option("--subject", help="Confirm as this subject (default: the operator, as admin).")
@click.option("--role", "roles", multiple=True, help="A role vouched for the subject.")
@json_option
@click.pass_context
def confirm_command(
    ctx: click.Context, receipt: str, subject: str | None, roles: tuple[str, ...], as_json: bool
) -> None:
    """Run the call an ask held for your confirmation (its answer said
    pending_confirmation and gave RECEIPT), as the subject it was held for, and print
    its result as ``plugyard call`` does. Exits 1 unless it succeeded."""
    with open_yard(ctx) as yard:
        vouched = roles if subject else None
        result = asyncio.run(yard.router.confirm(receipt, subject=subject, roles=vouched))
    emit_result(result, as_json)
