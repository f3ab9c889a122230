"""``plugyard keys create|list|revoke``: the service's API keys, in the store."""

from __future__ import annotations

import json
import sys

import click

from plugyard.store.keys import SqlKeyRepository
from plugyard.store.store import Store


def _store(ctx: click.Context) -> Store:
    return Store.open((ctx.find_root().obj or {}).get("db"))


@click.group("keys")
def keys_group() -> None:
    """Create, list and revoke API keys of the REST service."""


@keys_group.command("create")
@click.argument("subject")
@click.option(
    "--role",
    "roles",
    multiple=True,
    help="A role of the subject (repeat); 'admin' may register plugins. Sets the subject's roles.",
)
@click.option("--label", help="A note to tell the key apart in listings.")
@click.pass_context
def create_command(
    ctx: click.Context, subject: str, roles: tuple[str, ...], label: str | None
) -> None:
    """Make a key for SUBJECT and print it: this is the only time it is shown."""
    with _store(ctx) as store:
        info, key = SqlKeyRepository(store).create(subject, roles or None, label=label)
    click.echo(key)
    click.echo(
        f"key id {info.id} for subject {info.subject!r}, roles "
        f"{', '.join(info.roles) or '(none)'}; store it now: it is kept only hashed",
        err=True,
    )


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the keys as JSON.")
@click.pass_context
def list_command(ctx: click.Context, as_json: bool) -> None:
    """Every key ever made (never the key itself), revoked ones marked."""
    with _store(ctx) as store:
        found = SqlKeyRepository(store).list()
    if as_json:
        click.echo(json.dumps([k.to_dict() for k in found], indent=2))
        return
    for k in found:
        state = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "active"
        click.echo(
            f"{k.id}  {k.subject:<20} {','.join(k.roles) or '-':<16} {state:<24} {k.label or ''}"
        )


@keys_group.command("revoke")
@click.argument("key_id")
@click.pass_context
def revoke_command(ctx: click.Context, key_id: str) -> None:
    """Revoke a key by its id (exit 1 when no such active key exists)."""
    with _store(ctx) as store:
        done = SqlKeyRepository(store).revoke(key_id)
    if not done:
        click.echo(f"no active key {key_id!r}", err=True)
        sys.exit(1)
    click.echo(f"revoked {key_id}")
