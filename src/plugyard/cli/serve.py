"""``plugyard serve``: the REST service on uvicorn (uvloop and httptools when present).

It binds 127.0.0.1 unless told otherwise, and prints where its store is. On a store that
never had an API key it makes an admin key and prints it once; no later start prints one
again. The app is
built by ``plugyard.server.create_app`` inside uvicorn (a factory named by string: the
command line and the server are separate surfaces), from the same settings.
"""

from __future__ import annotations

import os

import click
import uvicorn

from plugyard.store.keys import SqlKeyRepository
from plugyard.store.store import Store
from plugyard.store.urls import resolve


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--db", metavar="URL_OR_PATH", help="The store (overrides the group's --db).")
@click.option(
    "--allow-outbound",
    "allow",
    multiple=True,
    metavar="IP[/N][:PORT]",
    help="Let external plugins at this address through the outbound guard "
    "(repeat; also PLUGYARD_OUTBOUND_ALLOW).",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@click.pass_context
def serve_command(
    ctx: click.Context,
    host: str,
    port: int,
    db: str | None,
    allow: tuple[str, ...],
    log_level: str,
) -> None:
    """Serve the REST API (OpenAPI at /openapi.json, docs at /docs)."""
    db = db or (ctx.find_root().obj or {}).get("db")
    if db:
        os.environ["PLUGYARD_DATABASE_URL"] = resolve(db).render_as_string(hide_password=False)
    if allow:
        held = os.environ.get("PLUGYARD_OUTBOUND_ALLOW", "")
        os.environ["PLUGYARD_OUTBOUND_ALLOW"] = ",".join(filter(None, [held, *allow]))
    with Store.open(os.environ.get("PLUGYARD_DATABASE_URL")) as store:
        key = SqlKeyRepository(store).bootstrap_admin()
        click.echo(f"plugyard: store {store.url}")
    if key is not None:
        click.echo(
            "plugyard: first start — admin API key (shown once, kept only hashed):\n"
            f"  {key}\n"
            "  send it as 'X-API-Key: <key>'; make more with 'plugyard keys create'"
        )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    click.echo(f"plugyard: web console at http://{shown}:{port}/ (log in with an API key)")
    uvicorn.run(
        "plugyard.server:create_app",
        factory=True,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
    )
