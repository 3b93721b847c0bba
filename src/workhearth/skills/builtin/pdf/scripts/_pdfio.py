"""Shared helpers of the pdf skill's scripts: page ranges, safe output, one-line errors."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


class UserError(Exception):
    """A mistake in the input: reported as one line on stderr, exit code 2."""


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
    resolved = {p.resolve() for p in inputs}
    if output.resolve() in resolved:
        raise UserError(f"the output {output} would overwrite an input")
    if output.exists() and not force:
        raise UserError(f"{output} exists (use --force to overwrite)")
    if not output.parent.is_dir():
        raise UserError(f"no such folder: {output.parent}")


def write_atomic(output: Path, write: Callable[[object], None]) -> None:
    """Write through a temp file in the same folder and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=".tmp-", suffix=output.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(prog: str, body: Callable[[], str]) -> int:
    """Print body()'s summary line; turn user mistakes into one stderr line and exit 2."""
    try:
        print(body())
    except UserError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        detail = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        print(f"{prog}: {detail}", file=sys.stderr)
        return 2
    return 0
