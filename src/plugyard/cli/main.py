"""The ``plugyard`` command: one group, one module per command family."""

from __future__ import annotations

import click

from plugyard import __version__
from plugyard.cli.ask import ask_command
from plugyard.cli.governance import COMMANDS as GOVERNANCE_COMMANDS
from plugyard.cli.keys import keys_group
from plugyard.cli.manifests import export_command, schema_command, validate_command
from plugyard.cli.mcp import mcp_group
from plugyard.cli.packages import packages_group
from plugyard.cli.pipeline import palette_command, pipeline_group
from plugyard.cli.plugins import call_command, plugins_group
from plugyard.cli.sandbox import sandbox_command
from plugyard.cli.search import index_group, search_command
from plugyard.cli.serve import serve_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="plugyard")
@click.option(
    "--db",
    metavar="URL_OR_PATH",
    help="The store: a SQLite path or a database URL (default: PLUGYARD_DATABASE_URL, "
    "else ./.plugyard/plugyard.db).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """plugyard: a plugin host for LLM applications."""
    ctx.obj = {"db": db}


cli.add_command(validate_command)
cli.add_command(export_command)
cli.add_command(schema_command)
cli.add_command(plugins_group)
cli.add_command(call_command)
cli.add_command(ask_command)
cli.add_command(search_command)
cli.add_command(index_group)
cli.add_command(serve_command)
cli.add_command(keys_group)
cli.add_command(pipeline_group)
cli.add_command(palette_command)
cli.add_command(mcp_group)
cli.add_command(packages_group)
cli.add_command(sandbox_command)

for governance_command in GOVERNANCE_COMMANDS:
    cli.add_command(governance_command)


def main() -> None:
    cli()
