"""``plugyard sandbox``: whether untrusted code can run on this host, and what bounds each
sandbox's processes and memory here (docs/subprocess.md, "Limits per sandbox")."""

from __future__ import annotations

import click

from plugyard.runtimes.sandbox import mechanism, unavailable_reason


@click.command("sandbox")
def sandbox_command() -> None:
    """Say how untrusted code is sandboxed on this host."""
    reason = unavailable_reason()
    click.echo(f"bubblewrap: {'available' if reason is None else f'unavailable: {reason}'}")
    click.echo(f"limits per sandbox: {mechanism()}")
