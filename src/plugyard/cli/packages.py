"""``plugyard packages install|list|remove``: plugin packages (zip + ``vendor/``) from the
command line. Whoever runs the CLI owns the yard's files, so is its operator: only here
and through an admin's REST call can a package be installed ``--trust``ed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from plugyard.cli.output import emit, json_option
from plugyard.cli.plugins import open_yard
from plugyard.errors import PlugyardError


@click.group("packages")
def packages_group() -> None:
    """Install, list and remove plugin packages (docs/packages.md)."""


@packages_group.command("install")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--trust", is_flag=True, help="Run it in-process (operators only; default: untrusted)."
)
@click.option(
    "--allow-findings",
    is_flag=True,
    help="Install an untrusted package even though the import guard found forbidden imports.",
)
@click.option("--name", help="The folder name (default: the first plugin id).")
@json_option
@click.pass_context
def install_command(
    ctx: click.Context,
    archive: Path,
    trust: bool,
    allow_findings: bool,
    name: str | None,
    as_json: bool,
) -> None:
    """Install (or upgrade) a package zip and register its plugins."""
    if not as_json:
        # Extraction, the import guard and each plugin's describe (a sandbox start for
        # untrusted code) take a moment: say what is happening.
        click.echo(f"installing {archive.name}: extracting, scanning, describing …", err=True)
    with open_yard(ctx) as yard:
        try:
            done = yard.packages.install(
                archive,
                trust="trusted" if trust else "untrusted",
                allow_findings=allow_findings,
                name=name,
            )
        except PlugyardError as exc:
            _fail(exc)
        out = done.package.to_dict() | {
            "registered": [e.plugin_id for e in done.events],
            "unavailable": [{"plugin_id": i, "reason": r} for i, r in done.unavailable],
        }
        for finding in done.package.findings:
            click.echo(
                f"warning: {finding['path']}:{finding['line']}: {finding['rule']}: "
                f"{finding['name']}",
                err=True,
            )
        emit(out, as_json)


@packages_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the packages as JSON.")
@click.pass_context
def list_command(ctx: click.Context, as_json: bool) -> None:
    """The installed packages, their trust and plugins."""
    with open_yard(ctx) as yard:
        packages = yard.packages.installed()
    if as_json:
        click.echo(json.dumps([p.to_dict() for p in packages], indent=2))
        return
    for package in packages:
        warned = f" ({len(package.findings)} finding(s))" if package.findings else ""
        click.echo(f"{package.name:<24} {package.trust:<9} {','.join(package.plugins)}{warned}")


@packages_group.command("remove")
@click.argument("name")
@json_option
@click.pass_context
def remove_command(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove a package and unregister its plugins."""
    with open_yard(ctx) as yard:
        try:
            package, events = yard.packages.remove(name)
        except PlugyardError as exc:
            _fail(exc)
    emit({"name": package.name, "removed": [e.plugin_id for e in events]}, as_json)


def _fail(exc: PlugyardError) -> NoReturn:
    if click.get_current_context().params.get("as_json"):
        details = getattr(exc, "details", {})
        error = {"code": exc.code, "message": exc.message, "details": details}
        emit({"error": error}, True)
    else:
        click.echo(f"error: {exc.code}: {exc.message}", err=True)
    sys.exit(1)
