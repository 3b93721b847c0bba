"""Every table the CLI prints, in one plain style: a header row, two spaces between columns,
no box, one line per row.

When the terminal is narrow, the table's free-text column (content, title, file name,
summary: ``Column.main``) keeps the width: ids shorten to a unique prefix, capped columns
shrink, droppable columns go, and only then is the free text cut, with an ellipsis.
Into a pipe (no ``COLUMNS``) nothing is cut or shortened.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

GAP = 2
# Why: "give the width to the content": before the free text is cut below this share of
# the line, droppable columns go.
MAIN_SHARE = 0.6


@dataclass(frozen=True)
class Column:
    """One column: how it gives way when the line is longer than the terminal."""

    name: str
    cut: Literal["never", "end", "start"] = "end"  # "start" keeps a path's tail: "…/project"
    align: Literal["left", "right"] = "left"
    main: bool = False  # the free text: it gets whatever width the others leave
    cap: int | None = None  # at most this wide while the line is too long
    drop: int | None = None  # may be left out when narrow: 1 goes first, then 2, …
    short: int | None = None  # an id: a unique prefix of at least this many characters


def terminal_width() -> int | None:
    """Columns to fit: ``COLUMNS``, else the terminal's; ``None`` (no limit) into a pipe."""
    import shutil

    if os.environ.get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return max(20, shutil.get_terminal_size().columns)
    return None


def cut(text: str, width: int, where: str = "end") -> str:
    """``text`` in at most ``width`` terminal cells, an ellipsis marking what was cut.

    ``where="start"`` keeps the tail, from a ``/`` when one falls inside it (``…/project``).
    """
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    if where == "start":
        tail = set_cell_size(text[::-1], width - 1)[::-1]
        slash = tail.find("/")
        if 0 < slash < len(tail) - 1:
            tail = tail[slash:]
        return "…" + tail.lstrip()
    return set_cell_size(text, width - 1).rstrip() + "…"


def unique_prefixes(values: Sequence[str], least: int) -> list[str]:
    """Each value as its shortest prefix (at least ``least`` long) no other value shares."""
    ordered = sorted(set(values))
    need: dict[str, int] = {}
    for before, after in itertools.pairwise(ordered):
        shared = 0
        while shared < min(len(before), len(after)) and before[shared] == after[shared]:
            shared += 1
        for value in (before, after):
            need[value] = max(need.get(value, 0), shared + 1)
    return [v[: max(least, need.get(v, 0))] for v in values]


def short_time(ts: float | None, now: float | None = None) -> str:
    """``02-10 14:05`` this year, ``2025-02-10`` before: a listing's narrow time."""
    if not ts:
        return ""
    stamp = time.localtime(ts)
    if stamp.tm_year == time.localtime(now or time.time()).tm_year:
        return time.strftime("%m-%d %H:%M", stamp)
    return time.strftime("%Y-%m-%d", stamp)


def short_size(size: int | None) -> str:
    """``812 B``, ``4.1 kB``, ``23 MB``: a size in at most six cells."""
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            break
        value /= 1000
    if unit == "B":
        return f"{size} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def fit_table(columns: list[Column], rows: list[list[Any]], width: int | None = None) -> list[str]:
    """The lines of a table no wider than ``width`` (the terminal's when not given).

    A ``cut="never"`` column (an id people copy) is never cut; if even with the rest
    dropped there is no room, the line is left long rather than the id cut.
    """
    width = terminal_width() if width is None else width
    cells = [[" ".join(("" if v is None else str(v)).split()) for v in row] for row in rows]
    layout = _Layout(columns, cells, width)
    return [layout.line([c.name for c in columns]), *(layout.line(r) for r in layout.cells)]


def print_table(columns: list[Column], rows: list[list[Any]]) -> None:
    """:func:`fit_table` on stdout, its header in bold on a terminal."""
    lines = fit_table(columns, rows)
    lines[0] = header(lines[0])
    print("\n".join(lines))


def header(line: str) -> str:
    """A table's header line, in bold on a terminal."""
    if sys.stdout.isatty() and "NO_COLOR" not in os.environ:
        return f"\033[1m{line}\033[0m"
    return line


class _Layout:
    """Which columns show and how wide each is, for one table at one width."""

    def __init__(self, columns: list[Column], cells: list[list[str]], width: int | None) -> None:
        self.columns = columns
        self.cells = cells
        mains = [i for i, c in enumerate(columns) if c.main]
        self.main = mains[0] if mains else len(columns) - 1
        self.shown = list(range(len(columns)))
        self.sizes = self._natural()
        if width is None or self._total(self.sizes) <= width:
            return
        self._shorten_ids()
        natural = self._natural()
        want = min(natural[self.main], int(width * MAIN_SHARE))
        droppable = sorted(
            (c.drop, i) for i, c in enumerate(columns) if c.drop is not None and i != self.main
        )
        for _, index in droppable:
            if self._squeezed(natural, width)[self.main] >= want:
                break
            self.shown.remove(index)
        self.sizes = self._squeezed(natural, width)
        self._give_back(natural, width)

    def _natural(self) -> list[int]:
        from rich.cells import cell_len

        return [
            max([cell_len(c.name)] + [cell_len(r[i]) for r in self.cells])
            for i, c in enumerate(self.columns)
        ]

    def _total(self, sizes: list[int]) -> int:
        return sum(sizes[i] for i in self.shown) + GAP * (len(self.shown) - 1)

    def _shorten_ids(self) -> None:
        for i, column in enumerate(self.columns):
            if column.short is not None:
                short = unique_prefixes([r[i] for r in self.cells], column.short)
                for row, value in zip(self.cells, short, strict=True):
                    row[i] = value

    def _squeezed(self, natural: list[int], width: int) -> list[int]:
        """Other columns at their cap; the main column gets the rest (at least its header)."""
        sizes = list(natural)
        for i in self.shown:
            column = self.columns[i]
            if i != self.main and column.cap is not None and column.cut != "never":
                sizes[i] = min(natural[i], max(column.cap, len(column.name)))
        sizes[self.main] = 0
        rest = width - self._total(sizes)
        sizes[self.main] = min(natural[self.main], max(rest, len(self.columns[self.main].name)))
        return sizes

    def _give_back(self, natural: list[int], width: int) -> None:
        """Room the main column does not need goes back to the capped columns, in order."""
        for i in self.shown:
            slack = width - self._total(self.sizes)
            if slack <= 0:
                return
            self.sizes[i] = min(natural[i], self.sizes[i] + slack)

    def line(self, values: list[str]) -> str:
        from rich.cells import cell_len

        parts = []
        for i in self.shown:
            column, text = self.columns[i], values[i]
            if column.cut != "never":
                text = cut(text, self.sizes[i], column.cut)
            pad = " " * max(0, self.sizes[i] - cell_len(text))
            parts.append(pad + text if column.align == "right" else text + pad)
        return (" " * GAP).join(parts).rstrip()
