"""The ``plugyard`` command: one group, one module per command family."""

from __future__ import annotations

import click

from plugyard import __version__
from plugyard.cli.manifests import export_command, schema_command, validate_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="plugyard")
def cli() -> None:
    """plugyard: a plugin host for LLM applications."""


cli.add_command(validate_command)
cli.add_command(export_command)
cli.add_command(schema_command)


def main() -> None:
    cli()
