"""A click group whose commands are imported only when one of them runs.

Every command family pulls in its own stack (the server, MCP, discovery, governance), and
``plugyard --version``, ``--help`` or ``plugins list`` must not pay for the others. The
group lists each command with a one-line help kept beside its import path, so ``--help``
imports nothing; a test holds those lines equal to the commands' own.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import click


class LazyCommand(NamedTuple):
    target: str  # "package.module:attribute"
    short_help: str

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(click.Group):
    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        # The same width rule as click's own listing, so the output looks the same.
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # An unloaded command is listed through a stand-in carrying its help line.
            command = self.commands.get(name) or click.Command(
                name, help=self.lazy[name].short_help
            )
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
