"""Commands imported only when they run: ``hearth check x.xlsx`` imports the check command
and nothing of memory, sessions or the server; ``hearth --help`` imports them all to list them.

Click's lazy-group pattern, through public API only: the group's ``commands`` (click's
name-to-command mapping) is a mapping that imports a command the first time it is looked
up, and ``list_commands`` names them without importing any. Each command is built by
Typer's ``typer.main.get_command`` from a Typer holding it alone, so it reads and parses
exactly as if it had been added up front.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

import typer
import typer.main

from workhearth.cli.help import HearthTyper, WrappedSummaries

# Where a command is: "module:attribute" (a command function or a Typer group), or a
# function that builds one (for a command that is handed what it needs).
Loader = str | Callable[[], Any]


class LazyGroup(WrappedSummaries):
    """A group whose commands are those of ``lazy``, each imported on first use, in its order.

    A subclass names its commands: ``class Hearth(LazyGroup): lazy = {...}``.
    """

    lazy: ClassVar[Mapping[str, Loader]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.lazy, self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: nothing is imported to list them


class LazyCommands(MutableMapping[str, Any]):
    """Name to click command; a command of ``lazy`` is imported the first time it is read."""

    def __init__(self, lazy: Mapping[str, Loader], loaded: Mapping[str, Any]) -> None:
        self.lazy = dict(lazy)
        self.loaded = dict(loaded)

    def __getitem__(self, name: str) -> Any:
        if name not in self.loaded:
            self.loaded[name] = load(name, self.lazy[name])  # KeyError: no such command
        return self.loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        found = self.lazy.pop(name, None) is not None
        if self.loaded.pop(name, None) is None and not found:
            raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self.lazy or name in self.loaded

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self.lazy), **dict.fromkeys(self.loaded)})

    def __len__(self) -> int:
        return len(self.lazy.keys() | self.loaded.keys())


def load(name: str, where: Loader) -> Any:
    """The click command ``name`` from where ``where`` says it is."""
    if isinstance(where, str):
        module, _, attribute = where.partition(":")
        target = getattr(importlib.import_module(module), attribute)
    else:
        target = where()
    # Why these settings: they are the ones `hearth` itself has (no completion options,
    # plain help text); Typer gives a command those of the Typer it is built from.
    holder = HearthTyper(add_completion=False, rich_markup_mode=None)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
        return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    holder.command(name)(target)
    return typer.main.get_command(holder)  # a Typer of one command is that command
