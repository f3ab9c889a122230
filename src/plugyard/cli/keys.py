"""``plugyard keys create|list|revoke``: the service's API keys, in the store."""

from __future__ import annotations

import click

from plugyard.cli.output import emit, fail, json_option
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
@json_option
@click.pass_context
def create_command(
    ctx: click.Context, subject: str, roles: tuple[str, ...], label: str | None, as_json: bool
) -> None:
    """Make a key for SUBJECT and print it: this is the only time it is shown."""
    with _store(ctx) as store:
        try:
            info, key = SqlKeyRepository(store).create(subject, roles or None, label=label)
        except ValueError as exc:
            fail("invalid_request", str(exc), as_json)
            return
    if as_json:
        emit({"key": key, **info.to_dict()}, True)
        return
    click.echo(key)
    click.echo(
        f"key id {info.id} for subject {info.subject!r}, roles "
        f"{', '.join(info.roles) or '(none)'}; store it now: it is kept only hashed",
        err=True,
    )


@keys_group.command("list")
@json_option
@click.pass_context
def list_command(ctx: click.Context, as_json: bool) -> None:
    """Every key ever made (never the key itself), revoked ones marked."""
    with _store(ctx) as store:
        found = SqlKeyRepository(store).list()
    if as_json:
        emit([k.to_dict() for k in found], True)
        return
    for k in found:
        state = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "active"
        click.echo(
            f"{k.id}  {k.subject:<20} {','.join(k.roles) or '-':<16} {state:<24} {k.label or ''}"
        )


@keys_group.command("revoke")
@click.argument("key_id")
@json_option
@click.pass_context
def revoke_command(ctx: click.Context, key_id: str, as_json: bool) -> None:
    """Revoke a key by its id (exit 1 when no such active key exists)."""
    with _store(ctx) as store:
        done = SqlKeyRepository(store).revoke(key_id)
    if not done:
        fail("key_not_found", f"no active key {key_id!r}", as_json)
    if as_json:
        emit({"revoked": key_id}, True)
        return
    click.echo(f"revoked {key_id}")
