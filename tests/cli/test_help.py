"""Every command's --help reads as a person expects: TEXT and INTEGER, not Python types."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer.main

from workhearth.main import app

_PYTHONIC = re.compile(r"<(?:str|int|float|bool|list\[\w+\]|Path)>|\{[A-Z_]+\}")


def _commands(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    yield " ".join(path), cmd
    # Why: Typer 0.2x carries its own copy of click, so its classes are not click's.
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, (*path, name))


def test_no_help_text_shows_python_types_or_braces() -> None:
    root = typer.main.get_command(app)
    seen = 0
    for name, cmd in _commands(root, ("hearth",)):
        text = cmd.get_help(cmd.make_context(name, [], resilient_parsing=True))
        assert not _PYTHONIC.search(text), f"{name} --help:\n{text}"
        for param in cmd.params:
            if param.param_type_name == "option" and not param.hidden:
                assert param.help, f"{name} {param.opts[0]} has no description"
        seen += 1
    assert seen > 25  # every group and command was walked
