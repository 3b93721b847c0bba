"""How commands print: JSON for scripts (``--json``), Rich tables for people."""

from __future__ import annotations

import sys
from typing import Any

import orjson


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
