"""``plugyard search`` and ``plugyard index rebuild``: plugin discovery from the command
line, on the embedded store unless ``--db`` or the environment says otherwise. The
embedder is ``PLUGYARD_EMBEDDER`` (docs/discovery.md)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from plugyard.cli.plugins import open_yard
from plugyard.discovery.query import MAX_K, Filters
from plugyard.errors import PlugyardError
from plugyard.manifest.model import FAMILIES


def _fail(error: PlugyardError | ValueError, as_json: bool) -> None:
    if isinstance(error, ValueError):  # a setting, e.g. PLUGYARD_EMBEDDER
        raise click.ClickException(str(error))
    if as_json:
        click.echo(json.dumps({"error": {"code": error.code, "message": error.message}}))
    else:
        click.echo(f"error: {error.code}: {error.message}", err=True)
    sys.exit(2)


@click.command("search")
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help=f"How many (1-{MAX_K}).")
@click.option("--family", type=click.Choice(FAMILIES), help="Only plugins of this family.")
@click.option("--capability", help="Only plugins a pipeline may place under this capability.")
@click.option("--include-unavailable", is_flag=True, help="Also plugins that cannot run now.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also matches under the relevance floor (the nearest k).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
@click.pass_context
def search_command(
    ctx: click.Context,
    query: str,
    k: int,
    family: str | None,
    capability: str | None,
    include_unavailable: bool,
    show_all: bool,
    as_json: bool,
) -> None:
    """The plugins that best match QUERY, each with its best operation and why. Matches
    under the relevance floor are left out unless --all: an empty answer means that
    nothing registered looks relevant."""
    filters = Filters(
        family=family,
        capability=capability,
        include_unavailable=include_unavailable,
        relevant_only=not show_all,
    )
    try:
        with open_yard(ctx) as yard:
            if not yard.discovery.built:
                # The first search of a store embeds what it has not embedded yet: say so.
                with embedding_bar(len(yard.registry)) as progress:
                    yard.discovery.start(progress)
            matches = yard.search(query, k, filters)
    except (PlugyardError, ValueError) as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps([m.to_dict() for m in matches], indent=2, ensure_ascii=False))
        return
    if not matches:
        if show_all:
            click.echo("no plugin matches (the registry is empty, or the filters exclude all)")
        else:
            click.echo(f"nothing relevant to {query!r} (--all shows the nearest plugins anyway)")
    for rank, match in enumerate(matches, 1):
        target = match.plugin_id + (f" {match.operation}" if match.operation else "")
        click.echo(f"{rank:>2}. {match.score:6.2f}  {target:<36} {match.plugin.descriptor.name}")
        click.echo(f"              {match.why}")


@contextlib.contextmanager
def embedding_bar(total: int) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr fed by the index build's ``progress(done, total)``."""
    with click.progressbar(length=max(1, total), label="embedding", file=sys.stderr) as bar:
        state = {"done": 0}

        def progress(done: int, total: int) -> None:
            bar.length = max(1, total)
            bar.update(done - state["done"])
            state["done"] = done

        yield progress


@click.group("index")
def index_group() -> None:
    """The discovery index."""


@index_group.command("rebuild")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def rebuild_command(ctx: click.Context, as_json: bool) -> None:
    """Embed every plugin and operation again and replace the stored vectors."""
    try:
        with open_yard(ctx) as yard:
            service = yard.discovery
            with embedding_bar(len(yard.registry)) as progress:
                changes = service.rebuild(progress)
            summary: dict[str, Any] = {
                "plugins": service.index.plugin_count,
                "entries": len(service.index),
                "embedded": changes.embedded,
                "embedder": service.embedder.identity,
            }
    except (PlugyardError, ValueError) as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(
            f"indexed {summary['plugins']} plugins as {summary['entries']} entries "
            f"({summary['embedded']} embedded by {summary['embedder']})"
        )


@index_group.command("memory")
@click.argument("plugin_id")
@click.option("--operation", help="Only the requests this operation answered.")
@click.option("--forget", is_flag=True, help="Forget them instead (examples stay).")
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON.")
@click.pass_context
def memory_command(
    ctx: click.Context, plugin_id: str, operation: str | None, forget: bool, as_json: bool
) -> None:
    """The requests discovery learned for PLUGIN_ID from calls and feedback (who asked
    what, oldest first), or --forget them. What callers asked: for operators only."""
    try:
        with open_yard(ctx) as yard:
            learning = yard.discovery.learning
            if forget:
                purged = yard.discovery.purge_memory(plugin_id, operation)
                click.echo(json.dumps({"purged": purged}) if as_json else f"forgot {purged}")
                return
            rows = learning.remembered(plugin_id, operation)
    except (PlugyardError, ValueError) as exc:
        _fail(exc, as_json)
        return
    items = [
        {"id": r.id, "operation": r.operation, "subject": r.subject, "query": r.query,
         "created_at": r.created_at}
        for r in rows
    ]  # fmt: skip
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    for item in items:
        click.echo(f"{item['id']:>6}  {item['operation'] or '-':<20} {item['subject']:<16} "
                   f"{item['query']}")  # fmt: skip
    if not items:
        click.echo(f"nothing learned for {plugin_id!r}")
