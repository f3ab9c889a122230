"""The ``plugyard`` command: one group, one module per command family, each imported only
when one of its commands runs (:mod:`plugyard.cli.lazy`)."""

from __future__ import annotations

import click

from plugyard import __version__
from plugyard.cli.lazy import LazyCommand, LazyGroup

_GOVERNANCE = "plugyard.cli.governance"

#: Every command: where it lives and its one-line help (``--help`` lists these).
COMMANDS = {
    "actions": LazyCommand(
        f"{_GOVERNANCE}:actions_group",
        "The Shu Actions API: write operations, with approval where the policy says.",
    ),
    "approvals": LazyCommand(
        f"{_GOVERNANCE}:approvals_group", "Requests waiting for a human decision."
    ),
    "ask": LazyCommand(
        "plugyard.cli.ask:ask_command",
        "Answer MESSAGE with the plugins: find the operations you may call, let the model "
        "choose one, call it under policy and approvals, and print each step and the answer.",
    ),
    "audit": LazyCommand(f"{_GOVERNANCE}:audit_group", "The hash-chained audit log."),
    "call": LazyCommand(
        "plugyard.cli.plugins:call_command",
        "Call an operation and print its result: the data, or the error with its code "
        "(--json: the whole result envelope).",
    ),
    "confirm": LazyCommand(
        "plugyard.cli.ask:confirm_command",
        "Run the call an ask held for your confirmation (its answer said pending_confirmation "
        "and gave RECEIPT), as the subject it was held for, and print its result as "
        "``plugyard call`` does.",
    ),
    "export": LazyCommand(
        "plugyard.cli.manifests:export_command",
        "Write the plugins of PATH (or, with --installed, the registered ones) as tool "
        "definitions or as another dialect.",
    ),
    "feeds": LazyCommand(f"{_GOVERNANCE}:feeds_group", "Scheduled operations, run as their owner."),
    "index": LazyCommand("plugyard.cli.search:index_group", "The discovery index."),
    "keys": LazyCommand(
        "plugyard.cli.keys:keys_group", "Create, list and revoke API keys of the REST service."
    ),
    "mcp": LazyCommand(
        "plugyard.cli.mcp:mcp_group",
        "Serve plugyard over MCP on stdin/stdout (subcommands: pins, approve).",
    ),
    "outcomes": LazyCommand(
        "plugyard.cli.reason:outcomes_command",
        "The planner outcome records of past reasoning requests (DS027), newest first.",
    ),
    "packages": LazyCommand(
        "plugyard.cli.packages:packages_group",
        "Install, list and remove plugin packages (docs/packages.md).",
    ),
    "palette": LazyCommand(
        "plugyard.cli.pipeline:palette_command",
        "Plugins by capability (ALL under every one, Undefined apart) and control components "
        "by role, as a pipeline editor shows them.",
    ),
    "pipeline": LazyCommand(
        "plugyard.cli.pipeline:pipeline_group",
        "Validate, run and draw pipelines (YAML or JSON; plugyard or OLO engine config).",
    ),
    "plugins": LazyCommand(
        "plugyard.cli.plugins:plugins_group", "List and show registered plugins."
    ),
    "policy": LazyCommand(f"{_GOVERNANCE}:policy_group", "Show, load and test the RBAC policy."),
    "sandbox": LazyCommand(
        "plugyard.cli.sandbox:sandbox_command",
        "Say how untrusted code is sandboxed on this host.",
    ),
    "reason": LazyCommand(
        "plugyard.cli.reason:reason_command",
        "Answer PROMPT with the reasoning plugins and print the trace: each stage as it "
        "finishes, then the answer and its citations.",
    ),
    "schema": LazyCommand(
        "plugyard.cli.manifests:schema_command",
        "Print the JSON Schema of the canonical descriptor.",
    ),
    "search": LazyCommand(
        "plugyard.cli.search:search_command",
        "The plugins that best match QUERY, each with its best operation and why.",
    ),
    "secrets": LazyCommand(
        f"{_GOVERNANCE}:secrets_group", "Encrypted secrets; values are never shown."
    ),
    "serve": LazyCommand(
        "plugyard.cli.serve:serve_command",
        "Serve the REST API (OpenAPI at /openapi.json, docs at /docs).",
    ),
    "validate": LazyCommand(
        "plugyard.cli.manifests:validate_command",
        "Check manifests (files or folders, recursively) of any dialect.",
    ),
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="plugyard")
@click.option(
    "--db",
    metavar="URL_OR_PATH",
    help="The store: a SQLite path or a database URL (default: PLUGYARD_DATABASE_URL, "
    "else plugyard.db in the data folder: PLUGYARD_HOME, else the XDG data folder, "
    "~/.local/share/plugyard).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """plugyard: a plugin host for LLM applications."""
    ctx.obj = {**(ctx.obj or {}), "db": db}


def main() -> None:
    # "process": the command owns its process (not a test or a host calling cli()).
    cli(prog_name="plugyard", obj={"process": True})
