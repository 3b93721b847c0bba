"""What the pdf scripts share beyond workhearth.skills.scriptkit: page ranges, opening a PDF,
the pdf skill's output wording, and a run() that prints the summary line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from workhearth.skills import scriptkit
from workhearth.skills.scriptkit import UserError

# Why: the pdf skill's own wording of a refused output, as its users know it.
OUTPUT_MESSAGES = {
    "input": "the output {path} would overwrite an input",
    "exists": "{path} exists (use --force to overwrite)",
    "parent": "no such folder: {parent}",
}


def parse_ranges(spec: str, n_pages: int, source: str = "") -> list[tuple[int, int]]:
    """'1-3,5,8-' → [(1, 3), (5, 5), (8, n)] (1-based, inclusive), checked against n_pages."""
    where = f" of {source}" if source else ""
    ranges: list[tuple[int, int]] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            start = int(first) if first else 1
            end = (int(last) if last else n_pages) if dash else start
        except ValueError:
            raise UserError(f"bad page range {part!r} (use e.g. 1-3,5,8-)") from None
        if start < 1 or end > n_pages or start > end:
            raise UserError(f"page range {part}{where} is outside 1-{n_pages}")
        ranges.append((start, end))
    if not ranges:
        raise UserError(f"empty page range {spec!r}")
    return ranges


def open_pdf(path: Path):
    """A pypdf reader, or UserError when the file is missing, not a PDF, or locked."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    # Why: pypdf logs each oddity of a broken file; the script reports one line instead.
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)

    if not path.is_file():
        raise UserError(f"no such PDF file: {path}")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UserError(f"{path} is encrypted with a password")
        len(reader.pages)
    except (PdfReadError, ValueError, KeyError) as exc:
        raise UserError(f"{path} is not a readable PDF ({exc})") from None
    return reader


def check_output(output: Path, inputs: list[Path], force: bool) -> None:
    scriptkit.check_output(output, inputs=inputs, force=force, messages=OUTPUT_MESSAGES)


def write_atomic(output: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(fh)`` on a temp file in the same folder, then rename it into place."""

    def to(tmp: Path) -> None:
        with tmp.open("wb") as fh:
            write(fh)

    scriptkit.atomic_write(output, to)


def run(prog: str, body: Callable[[], str]) -> int:
    """Print body()'s summary line; turn user mistakes into one stderr line and exit 2."""

    def main() -> int:
        try:
            print(body())
        except OSError as exc:
            detail = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
            raise UserError(detail) from None
        return 0

    return scriptkit.run(prog, main)
