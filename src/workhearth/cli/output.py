"""How commands print JSON for scripts (``--json``); tables for people are in :mod:`.tables`."""

from __future__ import annotations

import sys
from typing import Annotated, Any

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
