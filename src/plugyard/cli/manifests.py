"""``plugyard validate`` and ``plugyard export``: both read manifests and write nothing
(``export --installed`` opens the store, as ``plugyard plugins list`` does)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from plugyard.cli.described import describe_files, dialect_of, trusted, validate_note
from plugyard.errors import ExportError, ManifestError, Problem
from plugyard.manifest.exporters.dialect import DIALECT_NAMES, to_dialect
from plugyard.manifest.exporters.functions import FORMATS, export_tools
from plugyard.manifest.exporters.openai_strict import strict_problems
from plugyard.manifest.exporters.text import DEFAULT_SYNTAX, SYNTAXES, Syntax, render
from plugyard.manifest.load import ManifestDocument, load_file, manifest_files
from plugyard.manifest.model import PluginDescriptor, descriptor_json_schema
from plugyard.manifest.peek import peek
from plugyard.yard import Settings, Yard


def _plugin_row(doc: ManifestDocument, index: int, plugin: PluginDescriptor) -> dict[str, Any]:
    dialect = dialect_of(doc, index)
    note = validate_note(plugin, dialect)
    return {
        "path": doc.path,
        "dialect": dialect,
        "id": plugin.id,
        "name": plugin.name,
        "family": plugin.family,
        "runtime": plugin.runtime.kind,
        "placement": {
            "capabilities": list(plugin.placement.capabilities) or ["Undefined"],
            "role": plugin.placement.role,
            "only_inside_group": plugin.placement.only_inside_group,
        },
        "operations": [op.id for op in plugin.operations],
        "ok": True,
        "errors": [],
        "warnings": [w.as_dict() for w in (*doc.warnings, *([note] if note else []))],
    }


def _failure_row(path: Path, problems: tuple[Problem, ...]) -> dict[str, Any]:
    dialect, plugin_id, family = peek(path)
    return {
        "path": str(path),
        "dialect": dialect,
        "id": plugin_id,
        "family": family,
        "ok": False,
        "errors": [p.as_dict() for p in problems],
        "warnings": [],
    }


def validate_paths(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per plugin read, and one per manifest refused."""
    rows: list[dict[str, Any]] = []
    for root in paths:
        for file in manifest_files(root):
            try:
                doc = load_file(file)
            except ManifestError as exc:
                rows.append(_failure_row(file, exc.problems))
                continue
            rows.extend(_plugin_row(doc, i, p) for i, p in enumerate(doc.plugins))
    return rows


def _print_human(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if row["ok"]:
            place = row["placement"]
            click.echo(
                f"ok    {row['path']}  [{row['dialect']}]  {row['id']}  family={row['family']}"
                f"  runtime={row['runtime']}  placement={','.join(place['capabilities'])}"
                f"/{place['role']}  operations={','.join(row['operations']) or '-'}"
            )
        else:
            click.echo(f"FAIL  {row['path']}  [{row['dialect'] or '?'}]  {row['id'] or '?'}")
        for key in ("errors", "warnings"):
            for item in row[key]:
                label = "error" if key == "errors" else "warn "
                doc = f" (document {item['document']})" if item["document"] else ""
                pointer = item["pointer"] or "/"
                click.echo(f"      {label} {item['code']} {pointer}{doc}: {item['message']}")


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of result objects.")
def validate_command(paths: tuple[str, ...], as_json: bool) -> None:
    """Check manifests (files or folders, recursively) of any dialect."""
    rows = validate_paths(paths)
    if not rows:
        for root in paths:
            if not Path(root).exists():
                problem = Problem("manifest_not_found", "", "no such file or folder")
                rows.append(_failure_row(Path(root), (problem,)))
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        _print_human(rows)
        good = sum(1 for r in rows if r["ok"])
        click.echo(f"{good} plugin(s) valid, {len(rows) - good} manifest(s) refused")
    if any(not r["ok"] for r in rows) or not rows:
        sys.exit(1)


@click.command("export")
@click.argument("path", required=False, type=click.Path(exists=True))
@click.option(
    "--to", "target", required=True, type=click.Choice([*FORMATS, *DIALECT_NAMES]),
    help="A tool format (mcp, openai, anthropic) or a manifest dialect.",
)  # fmt: skip
@click.option("--syntax", type=click.Choice(SYNTAXES), help="Output syntax (default per format).")
@click.option(
    "--strict", is_flag=True,
    help="OpenAI strict-mode definitions; a tool with no strict form keeps strict: false.",
)  # fmt: skip
@click.option(
    "--installed", is_flag=True, help="Export what is registered in the store, not a folder."
)
@click.option(
    "--load-code/--no-load-code", default=None,
    help="Load PATH's Python code to describe its plugins as registration does "
    "(default: only for the bundled folder and PLUGYARD_PLUGIN_DIRS).",
)  # fmt: skip
@click.pass_context
def export_command(
    ctx: click.Context,
    path: str | None,
    target: str,
    syntax: Syntax | None,
    strict: bool,
    installed: bool,
    load_code: bool | None,
) -> None:
    """Write the plugins of PATH (or, with --installed, the registered ones) as tool
    definitions or as another dialect."""
    if (path is None) == (not installed):
        raise click.UsageError("give a PATH or --installed, not both")
    if strict and target not in FORMATS:
        raise click.UsageError("--strict applies to the tool formats")
    tools = target in FORMATS
    if installed:
        if load_code is not None:
            raise click.UsageError("--load-code applies to a PATH")
        plugins = _installed(ctx, tools)
    else:
        assert path is not None
        plugins = _from_folder(Path(path), load_code)
    chosen: Syntax = syntax or DEFAULT_SYNTAX.get(target, "json")
    try:
        if tools:
            exported = export_tools(plugins, target, strict=strict)
            if strict:
                _report_strict(exported)
            text = render(exported, "json", as_list=True)
        else:
            docs = [to_dialect(p, target) for p in plugins]
            if chosen == "python" and len(docs) != 1:
                chosen = "yaml"
            text = render(docs, chosen)
    except ExportError as exc:
        click.echo(f"error {exc.code}: {exc.message}", err=True)
        sys.exit(1)
    click.echo(text, nl=False)


def _from_folder(path: Path, load_code: bool | None) -> list[PluginDescriptor]:
    code = trusted(path) if load_code is None else load_code
    try:
        described = describe_files(manifest_files(path), load_code=code)
    except ManifestError as exc:
        for problem in exc.problems:
            click.echo(
                f"error {problem.code} {problem.pointer or '/'}: {problem.message}", err=True
            )
        sys.exit(1)
    for note in described.notes:
        click.echo(f"warn  {note.code} {note.message}", err=True)
    return list(described.plugins)


def _installed(ctx: click.Context, tools: bool) -> list[PluginDescriptor]:
    db = (ctx.find_root().obj or {}).get("db")
    # Governance only guards calls: exporting needs none of its keys.
    with Yard.from_settings(Settings.from_env(database=db, governed=False)) as yard:
        registered = yard.registry.list()
    if not tools:
        return [p.descriptor for p in registered]
    # A model offered a plugin that cannot run would only meet plugin_unavailable.
    idle = [p.id for p in registered if not p.available]
    if idle:
        click.echo(f"skipped {len(idle)} unavailable plugin(s): {', '.join(idle)}", err=True)
    return [p.descriptor for p in registered if p.available]


def _report_strict(tools: list[dict[str, Any]]) -> None:
    for problem in strict_problems(tools):
        click.echo(f"warn  {problem.code} {problem.message}", err=True)
    count = sum(1 for t in tools if t.get("function", {}).get("strict") is True)
    click.echo(f"{count} of {len(tools)} tool(s) strict", err=True)


@click.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the canonical descriptor."""
    click.echo(json.dumps(descriptor_json_schema(), indent=2, ensure_ascii=False))
