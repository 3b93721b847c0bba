"""How ``--help`` reads: ``TEXT`` and ``--count INTEGER``, not Typer's ``{TEXT}``, ``<str>``.

Every command group is a :class:`HearthTyper`, so each command gets :class:`PlainUsage`
without saying so. Both classes also read plain parameter values without pydantic
(:func:`workhearth.cli.params.make_plain`). Only public API: subclasses of Typer's
command and group classes overriding click's documented methods.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import typer
import typer.core

from workhearth.cli.params import make_plain

# How click names types; Typer 0.2x would print the Python type in angle brackets.
_TYPE_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH"}
_ARG_PIECE = re.compile(r"\{([^{}]+)\}(\.\.\.)?")
_ARG_TYPE = re.compile(r"(?m)^(\s+[A-Z][A-Z_]*(?:\.\.\.)?) <[\w\[\]]+>")


def _usage_piece(piece: str) -> str:
    """Typer's ``{TASK}`` as ``TASK``; a repeated ``{FILE}...`` or ``{FILE...}...`` as ``FILE...``."""
    found = _ARG_PIECE.fullmatch(piece)
    if found is None:
        return piece
    name, repeat = found.group(1), found.group(2) or ""
    return name if name.endswith("...") else name + repeat


class PlainUsage(typer.core.TyperCommand):
    """Help that says ``TASK`` and ``--count INTEGER``, not ``{TASK}``, ``TASK <str>``, ``<int>``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        make_plain(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        make_plain([option])  # Why: --help is read on every call, given or not
        return option

    def _plain_metavars(self) -> None:
        for param in self.params:
            # Why getattr: bare_type is Typer 0.29's; an older Typer already says TEXT.
            bare_type = getattr(param, "bare_type", None)
            if isinstance(param, typer.core.TyperOption) and param.metavar is None:
                if not param.is_flag and bare_type is not None:
                    bare = bare_type().removeprefix("list[").removesuffix("]")
                    param.metavar = _TYPE_NAMES.get(bare, bare.upper())

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        self._plain_metavars()
        return [_usage_piece(p) for p in super().collect_usage_pieces(ctx)]

    def get_help(self, ctx: Any) -> str:
        self._plain_metavars()
        # Why: an argument already reads as its name (TASK, FILE...); its type adds nothing.
        return _ARG_TYPE.sub(r"\1", super().get_help(ctx))


class WrappedSummaries(typer.core.TyperGroup):
    """A group whose command list gives each command's first sentence whole, wrapped.

    Why: click cuts a summary to what fits on one line at the terminal's width, so at
    80 columns "Show the audit log (arguments are stored with secrets..." lost its point.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        make_plain(self.params)  # the group's own options (hearth --model M …)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        make_plain([option])
        return option

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
