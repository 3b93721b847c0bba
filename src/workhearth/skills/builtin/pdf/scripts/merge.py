"""Merge PDFs into one, optionally taking only some pages of each (a.pdf:1-3,7)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pdfio import check_output, open_pdf, parse_ranges, run, write_atomic  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser

PROG = "merge.py"
RANGE_SUFFIX = re.compile(r"^(?P<path>.+?):(?P<ranges>[0-9][0-9,\- ]*|-[0-9]+)$")


def split_spec(spec: str) -> tuple[Path, str | None]:
    """'a.pdf:1-3' → (a.pdf, '1-3'); a path that exists as written wins (C:\\x.pdf, odd names)."""
    match = RANGE_SUFFIX.match(spec)
    if match and not Path(spec).exists():
        return Path(match["path"]), match["ranges"]
    return Path(spec), None


def merge(args: argparse.Namespace) -> str:
    from pypdf import PdfWriter

    output = Path(args.output)
    specs = [split_spec(s) for s in args.inputs]
    check_output(output, [p for p, _ in specs], args.force)
    writer = PdfWriter()
    total = 0
    readers = []  # Why kept: pypdf maps copied objects by id(reader); a freed id is reused.
    # Why: read and check every input before writing anything, so a bad one leaves no file.
    for path, ranges in specs:
        reader = open_pdf(path)
        n = len(reader.pages)
        for i, (start, end) in enumerate(
            parse_ranges(ranges, n, str(path)) if ranges else [(1, n)]
        ):
            # Why a fresh reader per range: a page taken twice must become two pages.
            source = reader if i == 0 else open_pdf(path)
            readers.append(source)
            # Why append, not add_page: it carries the form (fields, /DR, appearances) along.
            writer.append(source, pages=list(range(start - 1, end)), import_outline=False)
            total += end - start + 1
    write_atomic(output, writer.write)
    return f"wrote {output} ({total} pages from {len(specs)} files)"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__)
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="PDF[:PAGES]",
        help="input PDFs in order; PAGES like 1-3,5,8- (1-based, inclusive) takes only those",
    )
    parser.add_argument("-o", "--output", required=True, help="the merged PDF to write")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    args = parser.parse_args(argv)
    return run(PROG, lambda: merge(args))


if __name__ == "__main__":
    sys.exit(main())
