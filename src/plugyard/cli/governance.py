"""``plugyard policy|approvals|actions|audit|secrets|feeds``: governance from the command
line. ``--as SUBJECT`` (default ``$PLUGYARD_SUBJECT``) says who acts; every change is
audited under that name. Secret values are read from a hidden prompt or stdin and never
printed."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from plugyard.cli.output import emit, fail, input_option, json_option, read_input
from plugyard.cli.plugins import open_yard
from plugyard.errors import PlugyardError
from plugyard.governance.admin import context_for
from plugyard.types import Caller

_AS = click.option(
    "--as",
    "who",
    metavar="SUBJECT",
    default=lambda: os.environ.get("PLUGYARD_SUBJECT"),
    help="Who acts (default: $PLUGYARD_SUBJECT).",
)
_ROLES = click.option("--role", "roles", multiple=True, help="A role the subject holds.")


def _out(data: Any) -> None:
    emit(data, _as_json())


def _fail(exc: PlugyardError) -> None:
    fail(exc.code, exc.message, _as_json())


def _as_json() -> bool:
    return bool(click.get_current_context().params.get("as_json"))


# ------------------------------------------------------------------------- policy


@click.group("policy")
def policy_group() -> None:
    """Show, load and test the RBAC policy."""


@policy_group.command("show")
@json_option
@click.pass_context
def policy_show(ctx: click.Context, as_json: bool) -> None:
    """The policy in force: state, version and document."""
    with open_yard(ctx) as yard:
        book = yard.admin.book
        document = book.document
        _out(
            {
                "state": book.state,
                "version": book.version,
                "problem": book.problem,
                "document": document.model_dump(mode="json") if document else None,
            }
        )


@policy_group.command("load")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_AS
@json_option
@click.pass_context
def policy_load(ctx: click.Context, file: Path, who: str | None, as_json: bool) -> None:
    """Validate a YAML or JSON policy and put it in force (exit 1: refused, unchanged)."""
    with open_yard(ctx) as yard:
        try:
            version = yard.admin.load_policy(file.read_bytes(), by=who, source=str(file))
        except PlugyardError as exc:
            _fail(exc)
        _out({"version": version})


@policy_group.command("check")
@click.argument("subject")
@click.argument("plugin_id")
@click.argument("operation")
@_ROLES
@click.option("--verb", type=click.Choice(["call", "approve"]), default="call")
@json_option
@click.pass_context
def policy_check(
    ctx: click.Context,
    subject: str,
    plugin_id: str,
    operation: str,
    roles: tuple[str, ...],
    verb: str,
    as_json: bool,
) -> None:
    """What the policy decides for SUBJECT calling PLUGIN_ID OPERATION, and why."""
    with open_yard(ctx) as yard:
        _out(yard.admin.check(Caller(subject, roles), plugin_id, operation, verb))


# ------------------------------------------------------------------------- approvals


@click.group("approvals")
def approvals_group() -> None:
    """Requests waiting for a human decision."""


@approvals_group.command("list")
@click.option(
    "--state",
    type=click.Choice(["pending", "approved", "rejected", "used", "all"]),
    default="pending",
)
@json_option
@click.pass_context
def approvals_list(ctx: click.Context, state: str, as_json: bool) -> None:
    with open_yard(ctx) as yard:
        _out(yard.admin.approvals(None if state == "all" else state))


def _decide(
    ctx: click.Context,
    action_id: str,
    who: str | None,
    roles: tuple[str, ...],
    note: str | None,
    approve: bool,
) -> None:
    with open_yard(ctx) as yard:
        try:
            _out(yard.admin.decide(action_id, Caller(who, roles), approve, note))
        except PlugyardError as exc:
            _fail(exc)


@approvals_group.command("approve")
@click.argument("action_id")
@_AS
@_ROLES
@click.option("--note")
@json_option
@click.pass_context
def approvals_approve(
    ctx: click.Context,
    action_id: str,
    who: str | None,
    roles: tuple[str, ...],
    note: str | None,
    as_json: bool,
) -> None:
    """Approve a pending request (the approver must be allowed to)."""
    _decide(ctx, action_id, who, roles, note, True)


@approvals_group.command("reject")
@click.argument("action_id")
@_AS
@_ROLES
@click.option("--note")
@json_option
@click.pass_context
def approvals_reject(
    ctx: click.Context,
    action_id: str,
    who: str | None,
    roles: tuple[str, ...],
    note: str | None,
    as_json: bool,
) -> None:
    _decide(ctx, action_id, who, roles, note, False)


# ------------------------------------------------------------------------- actions


@click.group("actions")
def actions_group() -> None:
    """The Shu Actions API: write operations, with approval where the policy says."""


@actions_group.command("list")
@_AS
@_ROLES
@json_option
@click.pass_context
def actions_list(
    ctx: click.Context, who: str | None, roles: tuple[str, ...], as_json: bool
) -> None:
    """The actions the subject may perform (and which need approval)."""
    with open_yard(ctx) as yard:
        _out(yard.admin.list_actions(Caller(who, roles)))


@actions_group.command("perform")
@click.argument("plugin_id")
@click.argument("action")
@input_option("The action's arguments")
@click.option("--receipt", help="The receipt of an approved request.")
@click.option("--idempotency-key")
@_AS
@_ROLES
@json_option
@click.pass_context
def actions_perform(
    ctx: click.Context,
    plugin_id: str,
    action: str,
    body: str | None,
    receipt: str | None,
    idempotency_key: str | None,
    who: str | None,
    roles: tuple[str, ...],
    as_json: bool,
) -> None:
    """Perform an action: ok, error, or pending_approval with a receipt (exit 1 on error)."""
    context = context_for(who, roles, idempotency_key=idempotency_key)
    with open_yard(ctx) as yard:
        answer = asyncio.run(
            yard.admin.perform_action(plugin_id, action, read_input(body), context, receipt=receipt)
        )
        _out(answer)
        if answer["status"] == "error":
            sys.exit(1)


# ------------------------------------------------------------------------- audit


@click.group("audit")
def audit_group() -> None:
    """The hash-chained audit log."""


@audit_group.command("verify")
@json_option
@click.pass_context
def audit_verify(ctx: click.Context, as_json: bool) -> None:
    """Whether the chain holds, and where it breaks (exit 1 when it does not hold)."""
    with open_yard(ctx) as yard:
        check = yard.admin.verify()
        _out(check.to_dict())
        if not check.ok:
            sys.exit(1)


@audit_group.command("tail")
@click.option("-n", "count", type=int, default=20, show_default=True)
@json_option
@click.pass_context
def audit_tail(ctx: click.Context, count: int, as_json: bool) -> None:
    """The newest events (the last one's hash is the head to keep elsewhere)."""
    with open_yard(ctx) as yard:
        _out([r.to_dict() for r in yard.admin.tail(count)])


# ------------------------------------------------------------------------- secrets


@click.group("secrets")
def secrets_group() -> None:
    """Encrypted secrets; values are never shown."""


_SCOPE = click.option(
    "--user", "owner", metavar="SUBJECT", help="A user's secret (default: system)."
)


@secrets_group.command("set")
@click.argument("name")
@_SCOPE
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the value from stdin.")
@_AS
@json_option
@click.pass_context
def secrets_set(
    ctx: click.Context,
    name: str,
    owner: str | None,
    from_stdin: bool,
    who: str | None,
    as_json: bool,
) -> None:
    """Store a secret (prompted for, hidden, unless --stdin)."""
    value = (
        sys.stdin.read().rstrip("\n")
        if from_stdin
        else click.prompt(f"value of {name}", hide_input=True, err=True)
    )
    with open_yard(ctx) as yard:
        try:
            info = yard.admin.set_secret(
                name, value, scope="user" if owner else "system", owner=owner, by=who
            )
        except PlugyardError as exc:
            _fail(exc)
        _out(info.to_dict())


@secrets_group.command("list")
@_SCOPE
@json_option
@click.pass_context
def secrets_list(ctx: click.Context, owner: str | None, as_json: bool) -> None:
    """Names, scopes and dates: never values."""
    with open_yard(ctx) as yard:
        _out([s.to_dict() for s in yard.admin.secrets(owner=owner)])


@secrets_group.command("delete")
@click.argument("name")
@_SCOPE
@_AS
@json_option
@click.pass_context
def secrets_delete(
    ctx: click.Context, name: str, owner: str | None, who: str | None, as_json: bool
) -> None:
    with open_yard(ctx) as yard:
        gone = yard.admin.delete_secret(
            name, scope="user" if owner else "system", owner=owner, by=who
        )
        _out({"deleted": gone})
        if not gone:
            sys.exit(1)


# ------------------------------------------------------------------------- feeds


@click.group("feeds")
def feeds_group() -> None:
    """Scheduled operations, run as their owner."""


@feeds_group.command("add")
@click.argument("plugin_id")
@click.option("--op", "operation", help="Default: the plugin's default_feed_op.")
@click.option("--every", "interval_s", type=float, metavar="SECONDS")
@click.option("--cron", metavar="'M H DOM MON DOW'")
@input_option("The operation's parameters")
@_AS
@_ROLES
@json_option
@click.pass_context
def feeds_add(
    ctx: click.Context,
    plugin_id: str,
    operation: str | None,
    interval_s: float | None,
    cron: str | None,
    body: str | None,
    who: str | None,
    roles: tuple[str, ...],
    as_json: bool,
) -> None:
    """Schedule an operation (invalid_feed_op unless the plugin allows it in feeds)."""
    if who is None:
        raise click.UsageError("a feed runs as its owner: give --as")
    with open_yard(ctx) as yard:
        try:
            row = yard.feeds.add(
                owner=who,
                plugin_id=plugin_id,
                operation=operation,
                params=read_input(body),
                interval_s=interval_s,
                cron=cron,
                roles=roles,
            )
        except PlugyardError as exc:
            _fail(exc)
        _out({"id": row.id, "operation": row.operation, "next_run_at": row.next_run_at})


@feeds_group.command("list")
@click.option("--owner")
@json_option
@click.pass_context
def feeds_list(ctx: click.Context, owner: str | None, as_json: bool) -> None:
    with open_yard(ctx) as yard:
        _out([r.summary() for r in yard.feeds.all(owner)])


@feeds_group.command("run-due")
@json_option
@click.pass_context
def feeds_run_due(ctx: click.Context, as_json: bool) -> None:
    """Run every feed whose time has come (call it from cron or a timer)."""
    with open_yard(ctx) as yard:
        ticks = asyncio.run(yard.feeds.run_due())
        _out(
            [
                {
                    "id": t.feed_id,
                    "status": t.status,
                    "error": t.error_code,
                    "next_cursor": t.next_cursor,
                }
                for t in ticks
            ]
        )


COMMANDS = (policy_group, approvals_group, actions_group, audit_group, secrets_group, feeds_group)
