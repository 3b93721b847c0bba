"""How ``--help`` reads: ``TEXT`` and ``--count INTEGER``, not Typer's ``{TEXT}``, ``<str>``.

Every command group is a :class:`HearthTyper`, so each command gets :class:`PlainUsage`
without saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import typer
import typer.core

# How click names types; Typer 0.2x would print the Python type in angle brackets.
_TYPE_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH"}


class PlainUsage(typer.core.TyperCommand):
    """Help that says ``TASK`` and ``--count INTEGER``, not ``{TASK}``, ``TASK <str>``, ``<int>``."""

    def _plain_metavars(self) -> None:
        for param in self.params:
            if isinstance(param, typer.core.TyperOption) and param.metavar is None:
                if not param.is_flag:
                    bare = param.bare_type().removeprefix("list[").removesuffix("]")
                    param.metavar = _TYPE_NAMES.get(bare, bare.upper())

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        self._plain_metavars()
        return [p[1:-1] if p.startswith("{") else p for p in super().collect_usage_pieces(ctx)]

    def get_help(self, ctx: Any) -> str:
        self._plain_metavars()
        # Why: an argument already reads as its name (TASK); its type adds nothing.
        return re.sub(r"(?m)^(\s+[A-Z][A-Z_]*) <[\w\[\]]+>", r"\1", super().get_help(ctx))


class WrappedSummaries(typer.core.TyperGroup):
    """A group whose command list gives each command's first sentence whole, wrapped.

    Why: click cuts a summary to what fits on one line at the terminal's width, so at
    80 columns "Show the audit log (arguments are stored with secrets..." lost its point.
    """

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class HearthTyper(typer.Typer):
    """A command group with :class:`WrappedSummaries`, whose commands use :class:`PlainUsage`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", WrappedSummaries)
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        kwargs.setdefault("cls", PlainUsage)
        return super().command(*args, **kwargs)
