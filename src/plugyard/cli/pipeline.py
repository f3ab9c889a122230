"""``plugyard pipeline validate|run|diagram`` and ``plugyard palette``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from plugyard.cli.output import fail, json_option
from plugyard.cli.plugins import open_yard
from plugyard.errors import PipelineError, Problem
from plugyard.pipelines.loading import load
from plugyard.pipelines.mermaid import mermaid
from plugyard.pipelines.trace import PipelineRun

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def _faults(problems: tuple[Problem, ...], *, err: bool = True) -> None:
    for p in problems:
        click.echo(f"  {p.code:<26} {p.pointer or '/':<44} {p.message}", err=err)


@click.group("pipeline")
def pipeline_group() -> None:
    """Validate, run and draw pipelines (YAML or JSON; plugyard or OLO engine config)."""


@pipeline_group.command("validate")
@click.argument("file", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def validate_command(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Check FILE against the registry; exit 1 listing every fault (code and path).
    An OLO engine config is checked as OLO's engine checks it (engine mode)."""
    with open_yard(ctx) as yard:
        report = yard.pipelines.validate(file.read_bytes(), "auto")
    if as_json:
        click.echo(_dump({"file": str(file), **report.to_dict()}))
    elif report.ok:
        names = ", ".join(sorted(report.plan.pipelines)) if report.plan else ""
        mode = ", engine mode" if report.engine else ""
        click.echo(f"ok  {file}  ({report.dialect}{mode}; pipelines: {names})")
    else:
        click.echo(f"invalid  {file}  ({len(report.faults)} faults)", err=True)
        _faults(report.faults)
    if report.warnings and not as_json:
        click.echo("warnings:", err=True)
        _faults(report.warnings)
    if not report.ok:
        sys.exit(1)


@pipeline_group.command("run")
@click.argument("file", type=_FILE)
@click.option("--input", "body", metavar="'{...}'", default="{}", help="The input, a JSON object.")
@click.option("--pipeline", "name", help="Which pipeline of the document (default: its entry).")
@click.option("--timeout-ms", type=int, help="The run's deadline (default: the pipeline's).")
@click.option("--subject", help="Who the run is for (policy and audit see it).")
@click.option("--json", "as_json", is_flag=True, help="Print the run (context and trace) as JSON.")
@click.pass_context
def run_command(
    ctx: click.Context,
    file: Path,
    body: str,
    name: str | None,
    timeout_ms: int | None,
    subject: str | None,
    as_json: bool,
) -> None:
    """Run FILE on an input; print the final context and the trace (exit 1 unless it
    succeeded)."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--input") from None
    if not isinstance(data, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--input")
    with open_yard(ctx) as yard:
        try:
            run = asyncio.run(
                yard.pipelines.run(
                    file.read_bytes(),
                    data,
                    pipeline=name,
                    subject=subject,
                    timeout_ms=timeout_ms,
                    mode="auto",
                )
            )
        except PipelineError as exc:
            click.echo(f"not run: {exc.code}: {exc.message}", err=True)
            _faults(exc.problems)
            sys.exit(1)
    if as_json:
        click.echo(_dump(run.to_dict()))
    else:
        _print_run(run)
    if not run.ok:
        sys.exit(1)


def _print_run(run: PipelineRun) -> None:
    click.echo(f"{run.status}  pipeline {run.pipeline}  run {run.run_id}  {run.duration_ms} ms")
    if run.error:
        error = run.error
        click.echo(f"error: {error['code']} at {error['path']}: {error['message']}")
    click.echo("context:")
    click.echo(_dump(run.context))
    click.echo("trace:")
    depth: dict[int, int] = {}
    for entry in run.trace:
        level = depth[entry.seq] = (
            depth.get(entry.parent, -1) + 1 if entry.parent is not None else 0
        )
        size = "" if entry.output_bytes is None else f"{entry.output_bytes} B"
        label = f"{'  ' * level}{entry.kind} {entry.label}"
        extra = entry.error["code"] if entry.error else (entry.note or "")
        click.echo(
            f"  {entry.status:<9} {entry.duration_ms or 0:>9.3f} ms {size:>9}  {label:<40} {extra}"
        )


@pipeline_group.command("diagram")
@click.argument("file", type=_FILE)
@click.option("--pipeline", "name", help="Which pipeline (default: the entry, else all).")
@json_option
def diagram_command(file: Path, name: str | None, as_json: bool) -> None:
    """Print FILE as a Mermaid flowchart."""
    loaded = load(file.read_bytes())
    if loaded.document is None:
        if as_json:
            faults = [p.as_dict() for p in loaded.faults]
            click.echo(_dump({"file": str(file), "ok": False, "faults": faults}))
            sys.exit(1)
        click.echo(f"invalid  {file}", err=True)
        _faults(loaded.faults)
        sys.exit(1)
    try:
        diagram = mermaid(loaded.document, name)
    except PipelineError as exc:
        fail(exc.code, exc.message, as_json)
        return
    if as_json:
        click.echo(_dump({"file": str(file), "format": "mermaid", "diagram": diagram}))
        return
    click.echo(diagram, nl=False)


@click.command("palette")
@click.option("--capability", "capabilities", multiple=True, help="The pipeline's capabilities.")
@click.option("--json", "as_json", is_flag=True, help="Print the palette as JSON.")
@click.pass_context
def palette_command(ctx: click.Context, capabilities: tuple[str, ...], as_json: bool) -> None:
    """Plugins by capability (ALL under every one, Undefined apart) and control
    components by role, as a pipeline editor shows them."""
    with open_yard(ctx) as yard:
        view = yard.pipelines.palette(capabilities or None)
    if as_json:
        click.echo(_dump(view))
        return
    for title, groups in (("capability", view["sections"]), ("role", view["control"])):
        for group in groups:
            click.echo(f"{group[title]}")
            for item in group["plugins"]:
                mark = " " if item["available"] else "!"
                click.echo(f"  {mark} {item['id']:<24} {item['name']}")
            if not group["plugins"]:
                click.echo("    (none)")
