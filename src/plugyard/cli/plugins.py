"""``plugyard plugins list|show`` and ``plugyard call``: the registry and the call path
from the command line, on the embedded store unless ``--db`` or the environment says
otherwise."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from typing import Any

import click

from plugyard.cli.output import emit, emit_result, fail, input_option, json_option, read_input
from plugyard.errors import PlugyardError
from plugyard.manifest.model import FAMILIES
from plugyard.registry.listing import grouped, summary
from plugyard.yard import Settings, Yard


def open_yard(ctx: click.Context) -> Yard:
    root = ctx.find_root().obj or {}
    settings = Settings.from_env(database=root.get("db"))
    if not root.get("process"):
        return Yard.from_settings(settings)
    # A command is a short process, and what its start makes (a descriptor per plugin)
    # lives until it exits: the cycle collector need not scan all that while it grows,
    # nor afterwards while the command works (on 10,000 plugins, a third of the time).
    # Only in a process of its own: freezing is for the whole process.
    gc.disable()
    try:
        return Yard.from_settings(settings)
    finally:
        gc.freeze()
        gc.enable()


@click.group("plugins")
def plugins_group() -> None:
    """List and show registered plugins."""


@plugins_group.command("list")
@click.option("--capability", "capabilities", multiple=True, help="Only these capability sections.")
@click.option("--family", type=click.Choice(FAMILIES), help="Only plugins of this family.")
@click.option("--json", "as_json", is_flag=True, help="Print the palette as JSON.")
@click.pass_context
def list_command(
    ctx: click.Context, capabilities: tuple[str, ...], family: str | None, as_json: bool
) -> None:
    """Plugins grouped as the OLO palette does: by capability (ALL under every section),
    an Undefined section, and control components by role."""
    with open_yard(ctx) as yard:
        try:
            listing = grouped(yard.registry.list(family), only=capabilities or None)
        except PlugyardError as exc:
            click.echo(f"{exc.code}: {exc.message}", err=True)
            sys.exit(2)
        sections, control = listing["sections"], listing["control"]
        if as_json:
            click.echo(json.dumps({"sections": sections, "control": control}, indent=2))
            return
        lines = []  # written at once: one write per line is slow over thousands
        marked = False
        for title, groups in (("capability", sections), ("role", control)):
            for group in groups:
                if not group["plugins"]:
                    continue
                lines.append(f"{group[title]}")
                for item in group["plugins"]:
                    mark = " " if item["available"] else "!"
                    marked = marked or not item["available"]
                    lines.append(
                        f"  {mark} {item['id']:<24} {item['family']:<5} {item['runtime']:<7}"
                        f" {','.join(item['operations']):<36} {item['name']}"
                    )
        if lines:
            click.echo("\n".join(lines))
        click.echo("columns: id, family, runtime, operations, name", err=True)
        if marked:
            click.echo("! = cannot run now ('plugyard plugins show ID' says why)", err=True)
        failures = yard.report.failures
        for failure in failures:
            click.echo(f"skipped {failure.source}: {failure.code}: {failure.message}", err=True)


@plugins_group.command("show")
@click.argument("plugin_id")
@json_option
@click.pass_context
def show_command(ctx: click.Context, plugin_id: str, as_json: bool) -> None:
    """The whole canonical descriptor of one plugin."""
    with open_yard(ctx) as yard:
        plugin = yard.registry.find(plugin_id)
        if plugin is None:
            fail("plugin_not_found", f"no plugin {plugin_id!r}", as_json)
            return
        try:  # a stored descriptor is validated here, on its first use
            out = summary(plugin) | {"descriptor": plugin.descriptor.to_data()}
        except PlugyardError as exc:
            fail(exc.code, exc.message, as_json)
            return
        emit(out, as_json)


def _value(text: str) -> Any:
    """``--param k=v``: JSON when it parses (numbers, true, lists …), text otherwise."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@click.command("call")
@click.argument("plugin_id")
@click.argument("operation", required=False)
@click.option("--param", "-p", "pairs", multiple=True, metavar="KEY=VALUE", help="A parameter.")
@input_option("All parameters")
@click.option("--timeout-ms", type=int, help="Deadline for this call.")
@click.option("--debug", is_flag=True, help="Keep the plugin's diagnostics.")
@json_option
@click.pass_context
def call_command(
    ctx: click.Context,
    plugin_id: str,
    operation: str | None,
    pairs: tuple[str, ...],
    body: str | None,
    timeout_ms: int | None,
    debug: bool,
    as_json: bool,
) -> None:
    """Call an operation and print its result: the data, or the error with its code
    (--json: the whole result envelope). Exit 1 unless it succeeded."""
    params: dict[str, Any] = read_input(body)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--param")
        params[key] = _value(text)
    with open_yard(ctx) as yard:
        result = asyncio.run(
            yard.call(plugin_id, operation, params, timeout_ms=timeout_ms, debug=debug)
        )
    emit_result(result, as_json)
