"""Plain parameters are read through public Typer/click API, exactly as Typer reads them."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.core
import typer.main

from workhearth.cli.params import PlainArgument, PlainOption, is_plain, make_plain
from workhearth.main import app

CLI = Path(__file__).resolve().parents[2] / "src" / "workhearth" / "cli"
RAW_VALUES: list[Any] = [
    None, "", "abc", " a b ", "007", "12", "-3", "+4", "1.5", "1e3", "١٢",
    ["a", "b"], ("a",), [], True, False, 0, 5,
]  # fmt: skip


def _commands(cmd: Any, path: str = "hearth") -> Iterator[tuple[str, Any]]:
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def _outcome(call: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "value", call(*args)
    except Exception as exc:
        return type(exc).__name__, str(exc)


def _plain_params() -> Iterator[tuple[str, Any, Any]]:
    for path, cmd in _commands(typer.main.get_command(app)):
        ctx = cmd.make_context(path, [], resilient_parsing=True)
        for param in [*cmd.params, cmd.get_help_option(ctx)]:
            if isinstance(param, PlainOption | PlainArgument):
                yield f"{path} {param.name}", param, ctx


def test_most_parameters_are_plain_and_the_rest_keep_typers_class() -> None:
    kinds = {type(p) for _, p, _ in _plain_params()}
    assert kinds == {PlainOption, PlainArgument}
    root = typer.main.get_command(app)
    limit = next(p for p in root.commands["audit"].params if p.name == "limit")
    assert type(limit) is typer.core.TyperOption  # min=1: Typer checks it


def test_the_plain_path_returns_what_typer_returns_for_every_value() -> None:
    """Typer's own process_value is the reference: same value, or the same error."""
    seen = 0
    for where, param, ctx in _plain_params():
        typer_own = type(param).__mro__[1].process_value  # TyperOption / TyperArgument
        for raw in RAW_VALUES:
            if param.callback is not None and raw not in (None, False):
                continue  # Why: a callback acts (--help prints); only its no-op values compare
            ours = _outcome(param.process_value, ctx, copy.copy(raw))
            theirs = _outcome(typer_own, param, ctx, copy.copy(raw))
            assert ours == theirs, f"{where} given {raw!r}"
            seen += 1
    assert seen > 500


def test_a_typer_without_type_descriptors_keeps_its_own_checks() -> None:
    """The fallback: parameters of an older Typer (no type_descriptor) stay as they are."""
    root = typer.main.get_command(app)
    search = root.commands["memory"].commands["search"]
    text = next(p for p in search.params if p.name == "query")
    assert is_plain(text)
    older = copy.copy(text)
    older.__class__ = typer.core.TyperArgument
    del older.type_descriptor
    assert not is_plain(older)
    make_plain([older, None])
    assert type(older) is typer.core.TyperArgument


def test_cli_uses_no_private_typer_or_click_names() -> None:
    private = re.compile(r"\b(?:typer|click)(?:\.\w+)*\._\w+|from typer\._|from click\._")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(CLI.glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert not found, found


@pytest.mark.parametrize("value", ["5", "-0", "00", "abc", "1_000"])
def test_memory_search_limit_reads_like_typer(value: str) -> None:
    root = typer.main.get_command(app)
    search = root.commands["memory"].commands["search"]
    limit = next(p for p in search.params if p.name == "limit")
    ctx = search.make_context("search", ["q"], resilient_parsing=True)
    ours = _outcome(limit.process_value, ctx, value)
    theirs = _outcome(typer.core.TyperOption.process_value, limit, ctx, value)
    assert ours == theirs


def test_usage_lines_have_no_braces_and_repeat_marks_once() -> None:
    """Typer writes {TASK} and {FILE...}...; a person reads TASK and FILE... ."""
    for path, cmd in _commands(typer.main.get_command(app)):
        usage = cmd.get_usage(cmd.make_context(path, [], resilient_parsing=True))
        assert "{" not in usage and "}" not in usage and "...." not in usage, usage
    check = typer.main.get_command(app).commands["check"]
    assert check.get_usage(check.make_context("check", [], resilient_parsing=True)).endswith(
        "[OPTIONS] FILE..."
    )
