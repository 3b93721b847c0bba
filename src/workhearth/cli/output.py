"""How commands print: JSON for scripts (``--json``), Rich tables for people."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def print_json(data: Any) -> None:
    sys.stdout.buffer.write(
        orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=_default)
        + b"\n"
    )
    sys.stdout.flush()


def _default(obj: Any) -> Any:
    if hasattr(obj, "as_dict"):
        return obj.as_dict()
    return str(obj)


def console():  # -> rich.console.Console
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def table(columns: list[str], rows: list[list[Any]], title: str | None = None) -> None:
    from rich.table import Table

    t = Table(title=title, show_lines=False, header_style="bold")
    for i, col in enumerate(columns):
        # Why: the first column is an id people copy; never cut it.
        t.add_column(col, no_wrap=i == 0, min_width=None)
    for row in rows:
        t.add_row(*["" if v is None else str(v) for v in row])
    console().print(t)


def when(ts: float | None) -> str:
    if not ts:
        return ""
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


# ------------------------------------------------------------- fitted tables
@dataclass
class Column:
    """One column of :func:`fit_table`: how it may give way when the terminal is narrow."""

    name: str
    cut: Literal["never", "end", "start"] = "end"  # "start" keeps a path's tail: "…/project"
    align: Literal["left", "right"] = "left"


GAP = 2


def terminal_width() -> int | None:
    """Columns to fit: ``COLUMNS``, else the terminal's; ``None`` (no limit) into a pipe."""
    import os
    import shutil

    if os.environ.get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return max(20, shutil.get_terminal_size().columns)
    return None


def cut(text: str, width: int, where: str = "end") -> str:
    """``text`` in at most ``width`` terminal cells, an ellipsis marking what was cut."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    if where == "start":
        tail = set_cell_size(text[::-1], width - 1)[::-1]
        return "…" + tail.lstrip()
    return set_cell_size(text, width - 1).rstrip() + "…"


def fit_table(
    columns: list[Column],
    rows: list[list[Any]],
    *,
    shrink: Sequence[tuple[int, int]] = (),
    drop: Sequence[int] = (),
    width: int | None = None,
) -> list[str]:
    """Lines of a plain table no wider than ``width`` (the terminal's by default).

    Cells are one line each. When too wide, columns give way in the caller's order:
    ``shrink`` steps ``(column, floor)`` first, then whole columns in ``drop``
    order. A ``cut="never"`` column (an id people copy) is never cut; if even the
    rest dropped cannot make room, the line is left long rather than the id cut.
    """
    from rich.cells import cell_len

    width = terminal_width() if width is None else width
    cells = [[" ".join(("" if v is None else str(v)).split()) for v in row] for row in rows]
    sizes = [
        max([cell_len(c.name)] + [cell_len(r[i]) for r in cells]) for i, c in enumerate(columns)
    ]
    shown = list(range(len(columns)))

    def total() -> int:
        return sum(sizes[i] for i in shown) + GAP * (len(shown) - 1)

    if width is not None:
        for index, floor in shrink:
            if total() > width and columns[index].cut != "never":
                sizes[index] = min(sizes[index], max(floor, sizes[index] - (total() - width)))
        for index in drop:
            if total() > width and index in shown and len(shown) > 1:
                shown.remove(index)

    def line(values: list[str]) -> str:
        parts = []
        for i in shown:
            text = values[i]
            if columns[i].cut != "never":
                text = cut(text, sizes[i], columns[i].cut)
            pad = " " * (sizes[i] - cell_len(text))
            parts.append(pad + text if columns[i].align == "right" else text + pad)
        return (" " * GAP).join(parts).rstrip()

    return [line([c.name for c in columns]), *(line(r) for r in cells)]


def print_fitted(columns: list[Column], rows: list[list[Any]], **kw: Any) -> None:
    """:func:`fit_table`, the header in bold when printing to a terminal."""
    import os

    lines = fit_table(columns, rows, **kw)
    if sys.stdout.isatty() and "NO_COLOR" not in os.environ:
        lines[0] = f"\033[1m{lines[0]}\033[0m"
    print("\n".join(lines))
