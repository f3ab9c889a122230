"""``plugyard reason`` and ``plugyard outcomes``: the reasoning flow from the command
line (docs/reasoning.md).

``reason`` prints each stage, plan and hook as it finishes — the trace — then the answer
and its citations; ``--json`` prints only the whole answer, with its DS027 record and
trace. Without ``--subject`` the command acts for the operator who holds the database
(the admin role), as ``plugyard call`` does.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from plugyard.cli.output import emit, fail, json_option
from plugyard.cli.plugins import open_yard
from plugyard.errors import PlugyardError
from plugyard.reasoning import Reasoned
from plugyard.reasoning.record import OutcomeRecord
from plugyard.reasoning.trace import TraceEvent
from plugyard.types import Caller


def print_event(event: TraceEvent) -> None:
    """One line per finished call, plan or note: the trace as it happens."""
    data = event.data
    if event.kind in ("stage", "planner", "hook"):
        depth = "  " * int(data.get("frameDepth") or 0)
        found = data.get("sufficient")
        sufficient = "" if found is None else (" sufficient" if found else " not sufficient")
        error = data.get("error")
        why = f" ({error['code']}: {error['message']})" if error else ""
        calls = f", {data['llmCalls']} model call(s)" if data.get("llmCalls") else ""
        stage = data["stage"] if event.kind == "stage" else event.kind
        status = data.get("pluginStatus") or data["status"]
        click.echo(
            f"{depth}{stage:<14} {data['pluginId']:<16} {data['operation']:<20} "
            f"{status}{sufficient}{why}  {data['durationMs']:.1f} ms{calls}"
        )
    elif event.kind == "plan":
        kb, gs = ", ".join(data["kbPluginOrder"]), ", ".join(data["goalSolverOrder"])
        framed = f", decompose ({data['framePurpose']})" if data.get("decompose") else ""
        click.echo(
            f"plan {data['attempt']} by {data['plannerPluginId']}: "
            f"kb [{kb}] → goal solvers [{gs}]{framed}"
        )
        for note in data.get("notes") or ():
            click.echo(f"    {note}")
    else:
        rest = ", ".join(f"{k} {v}" for k, v in data.items() if k != "note" and v is not None)
        click.echo(f"note: {data.get('note')}{': ' + rest if rest else ''}")


def print_answer(answer: Reasoned) -> None:
    record = answer.record
    click.echo(f"\n{answer.status}:")
    if answer.answer:
        click.echo(answer.answer)
    for citation in answer.citations:
        click.echo(
            f"  [{citation.get('index')}] {citation.get('title') or ''} "
            f"{citation.get('sourceLink') or ''}".rstrip()
        )
    if answer.error is not None:
        click.echo(f"{answer.error.code}: {answer.error.message}")
    click.echo(
        f"(request {answer.request_id}, planner {record.planner_plugin_id}, "
        f"{len(record.stages)} stages, model calls {answer.llm_calls})",
        err=True,
    )


@click.command("reason")
@click.argument("prompt")
@click.option("--session", "session_id", metavar="ID", help="Continue this session.")
@click.option("--new-session", is_flag=True, help="Start a session (its id goes to stderr).")
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A source document staged for this turn (repeatable).",
)
@click.option(
    "--pin",
    "pins",
    multiple=True,
    metavar="STAGE=PLUGIN",
    help="Run STAGE with PLUGIN alone (seed-detector, kb, goal-solver, validation, "
    "planner; repeatable).",
)
@click.option("--budget", type=click.IntRange(0, 1000), help="Model calls the request may make.")
@click.option("--subject", help="Ask as this subject (default: the operator, as admin).")
@click.option("--role", "roles", multiple=True, help="A role vouched for the subject.")
@json_option
@click.pass_context
def reason_command(
    ctx: click.Context,
    prompt: str,
    session_id: str | None,
    new_session: bool,
    sources: tuple[Path, ...],
    pins: tuple[str, ...],
    budget: int | None,
    subject: str | None,
    roles: tuple[str, ...],
    as_json: bool,
) -> None:
    """Answer PROMPT with the reasoning plugins and print the trace: each stage as it
    finishes, then the answer and its citations. Exits 1 when the request fails."""
    pinned = dict(_pin(p) for p in pins)
    staged = {path.name: _read(path) for path in sources}
    with open_yard(ctx) as yard:
        caller = Caller.of(subject or None, roles if subject else None)

        async def run() -> Reasoned:
            chosen = session_id
            if new_session:
                created = await yard.reasoning.create_session(caller=caller)
                click.echo(f"session {created.id}", err=True)
                chosen = created.id
            return await yard.reasoning.reason(
                prompt,
                session=chosen,
                sources=staged,
                pins=pinned,
                budget=budget,
                caller=caller,
                on_event=None if as_json else print_event,
            )

        try:
            answer = asyncio.run(run())
        except PlugyardError as exc:
            fail(exc.code, exc.message, as_json)
            return
    if as_json:
        emit(answer.to_dict(), True)
    else:
        print_answer(answer)
    if answer.status == "failure":
        sys.exit(1)


@click.command("outcomes")
@click.option("--session", "session_id", metavar="ID", help="Only this session's requests.")
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=20,
    show_default=True,
    help="At most this many, newest first.",
)
@json_option
@click.pass_context
def outcomes_command(ctx: click.Context, session_id: str | None, limit: int, as_json: bool) -> None:
    """The planner outcome records of past reasoning requests (DS027), newest first."""
    with open_yard(ctx) as yard:
        records = yard.reasoning.records(session_id=session_id, limit=limit)
    if as_json:
        emit([r.to_dict() for r in records], True)
        return
    if not records:
        click.echo("(nothing)")
    for record in records:
        click.echo(_line(record))


def _line(record: OutcomeRecord) -> str:
    when = record.recorded_at.strftime("%Y-%m-%d %H:%M:%S") if record.recorded_at else "?"
    status = record.final_answer_status or record.final_status
    stages = " ".join(f"{s.plugin_id}:{s.status}" for s in record.stages)
    error = f" [{record.error.code}]" if record.error else ""
    return f"{when}  {record.request_id}  {status}{error}  {record.planner_plugin_id}  {stages}"


def _pin(text: str) -> tuple[str, str]:
    stage, sep, plugin = text.partition("=")
    if not sep or not stage.strip() or not plugin.strip():
        raise click.BadParameter(f"{text!r} is not STAGE=PLUGIN", param_hint="--pin")
    return stage.strip(), plugin.strip()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--source") from None
