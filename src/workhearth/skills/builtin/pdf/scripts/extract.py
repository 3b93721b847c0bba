"""Extract the text of each page and the tables of a PDF as JSON or Markdown."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pdfio import check_output, open_pdf, parse_ranges, run, write_atomic  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "extract.py"


def _clean(cell: object) -> str:
    return " ".join(str(cell).split()) if cell is not None else ""


def extract(path: Path, pages: str | None, tables: bool) -> dict:
    import logging

    import pdfplumber

    # Why: pdfminer logs every odd font at WARNING; one summary line is the script's output.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    n = len(open_pdf(path).pages)  # a clear error for a missing or broken file
    wanted = (
        [p for a, b in parse_ranges(pages, n, str(path)) for p in range(a, b + 1)]
        if pages
        else range(1, n + 1)
    )
    result: dict = {"file": str(path), "page_count": n, "pages": []}
    with pdfplumber.open(path) as pdf:
        for number in wanted:
            page = pdf.pages[number - 1]
            entry: dict = {"page": number, "text": page.extract_text() or "", "tables": []}
            if tables:
                for table in page.extract_tables():
                    rows = [[_clean(c) for c in row] for row in table if any(c for c in row)]
                    if rows:
                        entry["tables"].append(rows)
            result["pages"].append(entry)
    return result


def to_markdown(result: dict) -> str:
    parts = []
    for page in result["pages"]:
        parts.append(f"## Page {page['page']}\n\n{page['text'].strip()}\n")
        for i, rows in enumerate(page["tables"], start=1):
            width = max(len(r) for r in rows)
            rows = [r + [""] * (width - len(r)) for r in rows]
            esc = [[c.replace("|", "\\|") for c in r] for r in rows]
            lines = [f"| {' | '.join(esc[0])} |", "|" + " --- |" * width]
            lines += [f"| {' | '.join(r)} |" for r in esc[1:]]
            parts.append(f"**Table {page['page']}.{i}**\n\n" + "\n".join(lines) + "\n")
    return "\n".join(parts)


def main_body(args: argparse.Namespace) -> str:
    source = Path(args.input)
    fmt = args.format or ("json" if args.output and args.output.endswith(".json") else "md")
    if args.output:
        check_output(Path(args.output), [source], args.force)
    if not source.is_file():
        raise UserError(f"no such PDF file: {source}")
    result = extract(source, args.pages, not args.no_tables)
    text = (
        json.dumps(result, ensure_ascii=False, indent=2) if fmt == "json" else to_markdown(result)
    )
    if not args.output:
        return text
    output = Path(args.output)
    write_atomic(output, lambda fh: fh.write(text.encode("utf-8")))
    n_tables = sum(len(p["tables"]) for p in result["pages"])
    return f"wrote {output} ({len(result['pages'])} pages, {n_tables} tables)"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__)
    parser.add_argument("input", help="the PDF to read")
    parser.add_argument("-o", "--output", help="write here instead of printing (.json or .md)")
    parser.add_argument(
        "--format",
        choices=["json", "md"],
        help="output format (default: md, or json for a .json output)",
    )
    parser.add_argument("--pages", help="only these pages, e.g. 1-3,5 (1-based)")
    parser.add_argument("--no-tables", action="store_true", help="text only, skip table detection")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    args = parser.parse_args(argv)
    return run(PROG, lambda: main_body(args))


if __name__ == "__main__":
    sys.exit(main())
