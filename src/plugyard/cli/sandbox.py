"""``plugyard sandbox``: whether untrusted code can run on this host, and what bounds each
sandbox's processes and memory here (docs/subprocess.md, "Limits per sandbox")."""

from __future__ import annotations

import click

from plugyard.cli.output import emit, json_option
from plugyard.runtimes.sandbox import mechanism, unavailable_reason


@click.command("sandbox")
@json_option
def sandbox_command(as_json: bool) -> None:
    """Say how untrusted code is sandboxed on this host."""
    reason = unavailable_reason()
    if as_json:
        emit({"available": reason is None, "reason": reason, "limits": mechanism()}, True)
        return
    click.echo(f"bubblewrap: {'available' if reason is None else f'unavailable: {reason}'}")
    click.echo(f"limits per sandbox: {mechanism()}")
