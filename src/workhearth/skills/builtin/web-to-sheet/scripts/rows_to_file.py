"""Write table rows collected from web pages to a CSV or JSON file the xlsx skill takes.

The agent's browser tools read the pages (``browser_extract`` gives ``{"table": 1, "rows":
[[...], ...]}``, the header row first); this script only writes rows. It never opens a web
page: browsing stays with the agent's tools, under the approvals, the allow list and the audit.

Why a script at all: a table over several pages repeats its header on every page, and
cells arrive as text ("1,250", "42"); a sheet wants the header once and numbers as
numbers. Doing that by hand in the model's head loses rows.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "rows_to_file"
_INT = re.compile(r"^[+-]?\d+$")
_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$")
Cell = str | int | float | None


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="rows_to_file.py",
        description="Write table rows (JSON, e.g. browser_extract's output, one page after "
        "another) to a .csv or .json file: the header once, numbers as numbers.",
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        type=Path,
        help=".json files of rows, one per page, in order (default: read JSON from stdin; "
        "several JSON values one after another are several pages)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="the .csv or .json file to write"
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="add the rows to an existing output (its header must match); creates it if missing",
    )
    parser.add_argument(
        "--text",
        action="append",
        default=[],
        metavar="COLUMN",
        help="keep this column as text, e.g. codes or phone numbers (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


# ------------------------------------------------------------------ reading pages


def read_pages(inputs: list[Path], stdin: str | None) -> list[list[list[Any]]]:
    """Each page's rows (lists of cells), from the files or from the text of stdin."""
    if inputs:
        pages = []
        for path in inputs:
            text = existing_input(path, (".json",)).read_text(encoding="utf-8-sig")
            pages += [page_rows(value, str(path)) for value in json_values(text, str(path))]
        return pages
    if not stdin or not stdin.strip():
        raise UserError("no rows: give .json files or pipe JSON rows on stdin")
    return [page_rows(value, "stdin") for value in json_values(stdin, "stdin")]


def json_values(text: str, where: str) -> list[Any]:
    """Every JSON value in ``text``, one after another (pages pasted in a row)."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: invalid JSON ({exc})") from exc
        values.append(value)
    if not values:
        raise UserError(f"{where}: no JSON rows")
    return values


def page_rows(value: Any, where: str) -> list[list[Any]]:
    """The rows of one page: browser_extract's ``{"rows": [...]}``, ``{"columns", "rows"}``,
    a list of lists (header first) or a list of objects (keys are the header)."""
    if isinstance(value, dict) and isinstance(value.get("rows"), list):
        rows = value["rows"]
        if isinstance(value.get("columns"), list):
            rows = [value["columns"], *rows]
    elif isinstance(value, list):
        rows = value
    else:
        raise UserError(f'{where}: expected {{"rows": [[...], ...]}} or a list of rows')
    if rows and all(isinstance(r, dict) for r in rows):
        keys: list[str] = []
        for item in rows:
            keys += [str(k) for k in item if str(k) not in keys]
        return [keys, *([item.get(k) for k in keys] for item in rows)]
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, list):
            raise UserError(f"{where}: row {number} is not a list of cells")
        for cell in row:
            if isinstance(cell, list | dict):
                raise UserError(f"{where}: row {number} has a cell that is not text or a number")
    return rows


# ------------------------------------------------------------------ merging


def merge(pages: list[list[list[Any]]], header: list[str] | None) -> tuple[list[str], list, int]:
    """The header (the first page's first row, unless given), the data rows of every page
    with repeated header rows and blank rows left out, and how many headers were dropped."""
    rows: list[list[Any]] = []
    dropped = 0
    for page in pages:
        for row in page:
            cells = ["" if c is None else c for c in row]
            if not any(str(c).strip() for c in cells):
                continue
            if header is None:
                header = column_names(cells)
                continue
            if [str(c).strip() for c in cells] == header:
                dropped += 1  # Why: every page of a paged table repeats its header
                continue
            rows.append(cells)
    if header is None:
        raise UserError("no rows: the pages hold no table")
    width = len(header)
    for number, row in enumerate(rows, start=2):
        if len(row) > width:
            raise UserError(f"row {number} has {len(row)} cells for {width} columns ({row!r})")
    return header, [row + [""] * (width - len(row)) for row in rows], dropped


def column_names(cells: list[Any]) -> list[str]:
    """Header cells as names a sheet accepts: blanks named, repeats numbered."""
    names: list[str] = []
    for index, cell in enumerate(cells, start=1):
        base = str(cell).strip() or f"Column {index}"
        name, n = base, 2
        while name in names:
            name, n = f"{base} {n}", n + 1
        names.append(name)
    return names


def typed(value: Any) -> Cell:
    """A cell as the value a sheet should hold: "1,250" is 1250, "3.5" is 3.5; "007",
    "+86 10" or "12%" stay text (a leading zero marks a code; a unit or a space is not part
    of a number, and guessing what it meant would change the data)."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).lower()
    if isinstance(value, int | float):
        return value
    text = str(value).strip()
    if text == "":
        return None  # Why: a blank cell, not a cell holding an empty string
    plain = text.replace(",", "") if _GROUPED.match(text) else text
    digits = plain.lstrip("+-")
    if _INT.match(plain) and not (len(digits) > 1 and digits.startswith("0")):
        return int(plain)
    if _FLOAT.match(plain) and not (digits.startswith("0") and digits[1:2].isdigit()):
        return float(plain)
    return text


def type_rows(header: list[str], rows: list[list[Any]], text_columns: list[str]) -> list[list]:
    unknown = [c for c in text_columns if c not in header]
    if unknown:
        raise UserError(f"--text {unknown[0]!r}: no such column (columns: {', '.join(header)})")
    keep = {header.index(c) for c in text_columns}
    return [[str(c).strip() if i in keep else typed(c) for i, c in enumerate(row)] for row in rows]


# ------------------------------------------------------------------ the output


def read_existing(path: Path) -> tuple[list[str], list[list[Any]]]:
    """The header and rows of an output written before (for --append)."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".csv":
        rows = [r for r in csv.reader(io.StringIO(text)) if r]
        if not rows:
            return [], []
        return rows[0], rows[1:]
    try:
        data = json.loads(text)
        return [str(c) for c in data["columns"]], list(data["rows"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not a rows file this script wrote ({exc})") from exc


def write(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    if path.suffix.lower() == ".csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(["" if c is None else c for c in row] for row in rows)
        data = out.getvalue()
    else:
        data = json.dumps({"columns": header, "rows": rows}, ensure_ascii=False) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(data, encoding="utf-8"))


def check_same_columns(output: Path, header: list[str], pages: list[list[list[Any]]]) -> None:
    """Appending rows of another table is refused: its header row differs from the file's.

    A first row holding a number is data (a page without a header), not a header.
    """
    first = next((row for page in pages for row in page if row), None)
    if first is None or any(isinstance(typed(c), int | float) for c in first):
        return
    names = column_names(first)
    if len(names) == len(header) and names != header:
        raise UserError(
            f"{output}: its columns are {', '.join(header)}; these rows have {', '.join(names)}"
        )


def main() -> int:
    args = parse_args()
    appending = args.append and args.output.exists()
    check_output(
        args.output,
        inputs=tuple(args.inputs),
        force=args.force or appending,
        suffixes=(".csv", ".json"),
    )
    stdin = None if args.inputs else sys.stdin.read()
    pages = read_pages(args.inputs, stdin)
    before_header, before = read_existing(args.output) if appending else ([], [])
    header, rows, dropped = merge(pages, before_header or None)
    if appending and before_header:
        check_same_columns(args.output, header, pages)
    new = type_rows(header, rows, args.text)
    everything = type_rows(header, before, args.text) + new
    write(args.output, header, everything)
    summary = {
        "output": str(args.output),
        "columns": header,
        "added": len(new),
        "rows": len(everything),
        "pages": len(pages),
        "repeated_headers_dropped": dropped,
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        verb = "added" if appending else "wrote"
        print(
            f"{verb} {len(new)} rows from {len(pages)} page(s) to {args.output} "
            f"({len(everything)} rows, {len(header)} columns: {', '.join(header)}; "
            f"{dropped} repeated header row(s) dropped)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
