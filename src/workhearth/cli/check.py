"""``hearth check FILE...``: does each office file hold up when opened? A receipt each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import JsonOpt, print_json


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
        for receipt in receipts:
            pages = f" · {receipt.pages} pages" if receipt.pages else ""
            print(f"{receipt.path}: {receipt.verdict()}{pages}")
            for problem in receipt.problems:
                where = f"{problem.where}: " if problem.where else ""
                print(f"  {problem.kind}: {where}{problem.message}")
            for thumb in receipt.thumbnails:
                print(f"  thumbnail: {thumb}")
    if not all(r.ok for r in receipts):
        raise typer.Exit(1)
