"""The ``plugyard`` group: every command listed with its help, each imported only when it
runs, so ``--version`` and ``--help`` start without the server, MCP or discovery."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from plugyard import __version__
from plugyard.cli.main import COMMANDS, cli

# Runs the console script's main() and reports, at exit, every module it had imported.
SCRIPT = """\
import atexit, json, sys
atexit.register(lambda: print("MODULES", json.dumps(sorted(sys.modules)), file=sys.stderr))
from plugyard.cli.main import main
main()
"""
#: What no command that does not serve, search or call may import.
HEAVY = ("fastapi", "uvicorn", "mcp", "onnxruntime", "aiohttp", "cryptography",
         "plugyard.server", "plugyard.mcp_server", "plugyard.discovery.service")  # fmt: skip


def imported(*args: str) -> tuple[str, set[str]]:
    """The output of ``plugyard ARGS`` run as a process, and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return done.stdout, set(json.loads(line.removeprefix("MODULES ")))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_version_imports_click_and_little_else() -> None:
    out, modules = imported("--version")
    assert out.strip() == f"plugyard, version {__version__}"
    assert heavy(modules) == []
    assert {"pydantic", "sqlalchemy", "plugyard.yard", "plugyard.cli.plugins"}.isdisjoint(modules)


def test_help_lists_every_command_without_importing_one() -> None:
    out, modules = imported("--help")
    assert out.startswith("Usage: plugyard ")
    for name in COMMANDS:
        assert f"\n  {name} " in out, name
    assert heavy(modules) == []
    assert not any(m.startswith("plugyard.cli.") and m not in {
        "plugyard.cli.main", "plugyard.cli.lazy"} for m in modules)  # fmt: skip


def test_listing_plugins_loads_neither_the_server_nor_mcp_nor_governance() -> None:
    imported("plugins", "list")  # makes the store
    out, modules = imported("plugins", "list")
    assert "calculator" in out
    assert heavy(modules) == []
    assert "plugyard.governance.core" not in modules
    assert "alembic" not in modules  # the store was at head: nothing to migrate
    # Nothing changed, nothing to write: the SQLite store is read on the driver alone.
    assert "sqlalchemy" not in modules


def test_each_listed_help_line_is_the_commands_own() -> None:
    for name, lazy in COMMANDS.items():
        command = lazy.load()
        assert command.name == name
        assert lazy.short_help == command.get_short_help_str(limit=1000), name


def test_the_group_lists_exactly_the_known_commands() -> None:
    with click.Context(cli) as ctx:
        assert cli.list_commands(ctx) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_answers_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert COMMANDS[name].short_help.split(" (")[0][:40] in " ".join(result.output.split())


def test_an_unknown_command_is_refused_as_before() -> None:
    result = CliRunner().invoke(cli, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output


#: Commands whose output is not data for people: a server, and two that print a document
#: in a fixed format (``export --syntax``, ``schema`` is JSON Schema).
NOT_DATA = {"serve", "export", "schema"}


def _leaves(
    group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()
) -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _leaves(command, click.Context(command, parent=ctx), (*path, name))
        else:
            found.append((" ".join((*path, name)), command))
    return found


def test_every_command_that_prints_data_takes_json() -> None:
    # The README's promise: one grammar, --json on every command.
    leaves = _leaves(cli, click.Context(cli))
    assert "keys create" in dict(leaves)
    without = [
        name
        for name, command in leaves
        if name not in NOT_DATA
        and not any("--json" in p.opts for p in command.params if isinstance(p, click.Option))
    ]
    assert without == []
