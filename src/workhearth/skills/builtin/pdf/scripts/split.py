"""Split a PDF into one file per page, or one file per page range."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pdfio import check_output, open_pdf, parse_ranges, run, write_atomic  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "split.py"


def split(args: argparse.Namespace) -> str:
    from pypdf import PdfWriter

    source = Path(args.input)
    reader = open_pdf(source)
    n = len(reader.pages)
    ranges = (
        parse_ranges(args.ranges, n, str(source))
        if args.ranges
        else [(i, i) for i in range(1, n + 1)]
    )
    outdir = Path(args.output_dir) if args.output_dir else source.parent
    if outdir.exists() and not outdir.is_dir():
        raise UserError(f"the output folder {outdir} is a file, not a folder")
    prefix = args.prefix or source.stem
    targets = []
    for start, end in ranges:
        label = f"p{start}" if start == end else f"p{start}-{end}"
        targets.append((outdir / f"{prefix}-{label}.pdf", start, end))
    if len({t for t, _, _ in targets}) != len(targets):
        raise UserError("two ranges would write the same file")
    # Why: the skill's example writes to parts/, which a user has rarely made beforehand.
    outdir.mkdir(parents=True, exist_ok=True)
    # Why: check every target first, so a clash leaves nothing half-written.
    for target, _, _ in targets:
        check_output(target, [source], args.force)
    for target, start, end in targets:
        writer = PdfWriter()
        # Why append, not add_page: it carries the form (fields, /DR, appearances) along.
        writer.append(reader, pages=list(range(start - 1, end)), import_outline=False)
        write_atomic(target, writer.write)
    names = ", ".join(t.name for t, _, _ in targets[:3]) + (" …" if len(targets) > 3 else "")
    return f"wrote {len(targets)} files to {outdir} ({names})"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__)
    parser.add_argument("input", help="the PDF to split")
    parser.add_argument(
        "-o",
        "--output-dir",
        help="folder for the parts, created if needed (default: the input's folder)",
    )
    parser.add_argument(
        "--ranges",
        help="pages of each part, e.g. '1-3,4-6,7-' (default: one file per page)",
    )
    parser.add_argument("--prefix", help="file name prefix (default: the input's name)")
    parser.add_argument("--force", action="store_true", help="overwrite existing parts")
    args = parser.parse_args(argv)
    return run(PROG, lambda: split(args))


if __name__ == "__main__":
    sys.exit(main())
