"""``hearth check FILE...``: does each office file hold up when opened? A receipt each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import terminal_width

# Why a hanging indent: a problem's continuation lines sit under its text, not its kind.
INDENT = "    "


def check(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help=".docx .xlsx .pptx .pdf")],
    json: JsonOpt = False,
) -> None:
    """Verify office files: opens, formulas, glyphs, layout, thumbnails (exit 0 only if all ok)."""
    wh = hearth()
    receipts = wh.check(*files)
    if json:
        print_json([r.to_json() for r in receipts])
    else:
        width = terminal_width()
        for receipt in receipts:
            # Why brief: the problems follow, each once; the head only counts them.
            _say(f"{receipt.path}: {receipt.summary(brief=True)}", width)
            for problem in receipt.problems:
                where = f"{problem.where}: " if problem.where else ""
                _say(f"  {problem.kind}: {where}{problem.message}", width)
            for thumb in receipt.thumbnails:
                _say(f"  thumbnail: {thumb}", width)
    if not all(r.ok for r in receipts):
        raise typer.Exit(1)


def _say(line: str, width: int | None) -> None:
    for part in wrap(line, width):
        print(part)


def wrap(line: str, width: int | None, indent: str = INDENT) -> list[str]:
    """``line`` cut at spaces into lines of at most ``width`` terminal cells (Chinese counts
    two), continuation lines indented; a word longer than a line stays whole. Into a pipe
    (``width`` None) one line, so scripts can grep it."""
    from rich.cells import cell_len

    if width is None or cell_len(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip(" "))]
    lines: list[str] = []
    current = lead
    for word in line.split():
        joined = f"{current} {word}" if current.strip() else f"{current}{word}"
        if current.strip() and cell_len(joined) > width:
            lines.append(current)
            current = f"{lead}{indent}{word}"
        else:
            current = joined
    lines.append(current)
    return lines
