"""``plugyard mcp``: plugyard as an MCP server on stdio, and the pins of MCP tools.

``plugyard mcp --subject alice`` (or ``--api-key``) serves; ``plugyard mcp pins`` lists
the pinned tool hashes and ``plugyard mcp approve PLUGIN TOOL`` re-approves a tool whose
definition changed (docs/mcp.md).
"""

from __future__ import annotations

import asyncio
import sys

import click

from plugyard.cli.output import emit, json_option
from plugyard.mcp_server import McpFront, serve_stdio
from plugyard.types import Caller
from plugyard.yard import Settings, Yard


def _yard(ctx: click.Context, db: str | None) -> Yard:
    chosen = db or (ctx.find_root().obj or {}).get("db")
    return Yard.from_settings(Settings.from_env(database=chosen))


@click.group("mcp", invoke_without_command=True)
@click.option("--db", metavar="URL_OR_PATH", help="The store (default: the global --db).")
@click.option("--subject", help="Who calls (policy, approvals and audit use it).")
@click.option("--role", "roles", multiple=True, help="A role of --subject (repeat).")
@click.option("--api-key", help="Call as this API key's subject and roles instead.")
@click.option(
    "--mode",
    type=click.Choice(["tools", "discovery"]),
    default="tools",
    show_default=True,
    help="tools: one MCP tool per operation; discovery: a search and a call tool.",
)
@click.pass_context
def mcp_group(
    ctx: click.Context,
    db: str | None,
    subject: str | None,
    roles: tuple[str, ...],
    api_key: str | None,
    mode: str,
) -> None:
    """Serve plugyard over MCP on stdin/stdout (subcommands: pins, approve)."""
    ctx.ensure_object(dict)
    ctx.obj["mcp_db"] = db
    if ctx.invoked_subcommand is not None:
        return
    with _yard(ctx, db) as yard:
        # Nobody named: the operator who started it, as the application itself (the
        # same as ``plugyard call``); name a subject or a key to serve with less.
        caller = Caller.of(subject, roles or None)
        if api_key is not None:
            principal = yard.keys.verify(api_key)
            if principal is None:
                click.echo("the API key is not valid (unknown or revoked)", err=True)
                sys.exit(2)
            caller = Caller(principal.subject, principal.roles)
        front = McpFront(yard, "discovery" if mode == "discovery" else "tools")
        asyncio.run(_serve(yard, front, caller))


async def _serve(yard: Yard, front: McpFront, caller: Caller) -> None:
    try:
        await serve_stdio(front, caller)
    finally:
        closer = getattr(yard.runtimes.get("mcp"), "aclose", None)
        if closer is not None:
            await closer()


@mcp_group.command("pins")
@click.argument("plugin_id", required=False)
@json_option
@click.pass_context
def pins_command(ctx: click.Context, plugin_id: str | None, as_json: bool) -> None:
    """The pinned and last seen definition hash of each MCP tool."""
    with _yard(ctx, ctx.obj.get("mcp_db")) as yard:
        emit([pin.to_dict() for pin in yard.mcp_tool_pins(plugin_id)], as_json)


@mcp_group.command("approve")
@click.argument("plugin_id")
@click.argument("tool")
@click.option("--by", help="Who approves (recorded in the audit log).")
@json_option
@click.pass_context
def approve_command(
    ctx: click.Context, plugin_id: str, tool: str, by: str | None, as_json: bool
) -> None:
    """Trust the definition TOOL of PLUGIN_ID shows now (re-enables a changed tool)."""
    with _yard(ctx, ctx.obj.get("mcp_db")) as yard:
        pin = yard.approve_mcp_tool(plugin_id, tool, by=by)
    emit(pin.to_dict(), as_json)
