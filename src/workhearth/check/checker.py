"""Checking one file: the formats' readers, the round trip and the thumbnails together."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import BinaryIO

from workhearth.check import glyphs
from workhearth.check.package import Package, integrity, open_package
from workhearth.check.receipt import FORMATS, Problem, Receipt
from workhearth.check.render import Conversion, RenderError, Tools, thumbnails, work_dir
from workhearth.errors import NotFoundError, UsageError

TEXT_KEPT = 2000
THUMBNAILS = 3  # the first pages (slides) a receipt shows
INSTALL_LIBREOFFICE = (
    "LibreOffice (Debian: apt-get install libreoffice-writer libreoffice-calc libreoffice-impress)"
)


def sha256_of(path: Path) -> str:
    with path.open("rb") as fh:
        return sha256_stream(fh)


def sha256_stream(fh: BinaryIO) -> str:
    """The sha256 of what is left to read in ``fh`` (read in blocks)."""
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, tools: Tools, thumbs: Path | None = None) -> Receipt:
    """Check one file; thumbnails go to ``thumbs`` (none when it is None).

    Raises :class:`UsageError` for a format it does not check and
    :class:`NotFoundError` for a missing file; everything wrong *with* the file is a
    problem in the receipt, never an exception.
    """
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(f"{path.name}: hearth check reads .docx, .xlsx, .pptx and .pdf files")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder, not a file")
    if not path.is_file():
        raise NotFoundError(f"{path}: no such file")
    started = time.perf_counter()
    receipt = Receipt(path=str(path), format=fmt, sha256=sha256_of(path))
    if fmt == "pdf":
        _check_pdf(receipt, path, tools, thumbs)
    else:
        _check_office(receipt, path, tools, thumbs)
    receipt.seconds = time.perf_counter() - started
    return receipt


# Why the readers are imported where they are used: pypdf, openpyxl and python-pptx cost
# ~0.2 s to import; LibreOffice starts first and converts while they load.


def _check_pdf(receipt: Receipt, path: Path, tools: Tools, thumbs: Path | None) -> None:
    from workhearth.check.pdf import pdf_facts

    facts = pdf_facts(path)
    receipt.checked += ["parse", "fonts", "glyphs"]
    receipt.pages, receipt.text = facts.pages, facts.text[:TEXT_KEPT]
    receipt.problems += facts.problems
    if facts.pages:
        _thumbnails(receipt, path, tools, thumbs, facts.pages)


def _check_office(receipt: Receipt, path: Path, tools: Tools, thumbs: Path | None) -> None:
    package, problems = open_package(path)
    receipt.problems += problems
    if package is None:
        return
    try:
        if tools.soffice is None:
            if _whole(receipt, package):
                _content(receipt, path, package)
                receipt.problems.append(
                    Problem(
                        "skipped",
                        "round trip",
                        f"LibreOffice is not installed: {INSTALL_LIBREOFFICE}",
                        "no_libreoffice",
                    )
                )
            return
        with work_dir(tools, "render-") as tmp, Conversion(tools, path, tmp) as converting:
            # Why started first: LibreOffice converts (a second or more, in its own
            # process) while this one checks the package and reads the content; leaving
            # this block early (a broken package) stops it.
            if not _whole(receipt, package):
                return
            _content(receipt, path, package)
            package.close()
            _rendered(receipt, converting, tools, thumbs)
    finally:
        package.close()


def _whole(receipt: Receipt, package: Package) -> bool:
    """The package's structure; False when it is broken (its content is then not read:
    reading the content of a broken package reports its breakage twice)."""
    receipt.checked.append("package")
    receipt.problems += integrity(package)
    return not any(p.kind == "opens" for p in receipt.problems)


def _content(receipt: Receipt, path: Path, package: Package) -> None:
    from workhearth.check.sheet import sheet_facts
    from workhearth.check.slides import slide_facts
    from workhearth.check.word import word_facts

    try:
        if receipt.format == "docx":
            word = word_facts(package)
            receipt.text, receipt.problems = word.text, receipt.problems + word.problems
            receipt.tracked_changes, receipt.comments = word.tracked_changes, word.comments
        elif receipt.format == "xlsx":
            sheet = sheet_facts(package)
            receipt.text, receipt.problems = sheet.text, receipt.problems + sheet.problems
            receipt.formula_errors = sheet.formula_errors
            receipt.checked.append("formulas")
        else:
            deck = slide_facts(path)
            receipt.text, receipt.problems = deck.text, receipt.problems + deck.problems
    except Exception as exc:  # Why: a reader library choking on a file is a verdict on it
        receipt.problems.append(
            Problem(
                "opens",
                "",
                f"cannot be read as {receipt.format}: {exc}",
                "unreadable",
                {"format": receipt.format},
            )
        )
        return
    receipt.checked += ["layout", "glyphs"]
    if runs := glyphs.QUESTION_RUN.findall(receipt.text):
        receipt.problems.append(
            Problem(
                "text",
                "",
                f"'{runs[0]}' stands in for text (a font without the glyphs?)",
                "question_marks",
                {"text": runs[0]},
            )
        )
    if not glyphs.available():
        receipt.problems.append(
            Problem("skipped", "glyphs", "fontconfig is not installed", "no_fontconfig")
        )
    elif missing := glyphs.missing(receipt.text):
        receipt.problems.append(
            Problem(
                "text",
                "",
                f"no installed font has a glyph for {glyphs.describe(missing)}",
                "missing_glyphs",
                {"chars": glyphs.describe(missing)},
            )
        )
    receipt.text = receipt.text[:TEXT_KEPT]


def _rendered(receipt: Receipt, converting: Conversion, tools: Tools, thumbs: Path | None) -> None:
    """What LibreOffice's PDF export says: it opened, its pages, glyphs, thumbnails."""
    from workhearth.check.pdf import pdf_facts

    try:
        rendered = converting.result()
    except RenderError as exc:
        receipt.problems.append(
            Problem("opens", "round trip", str(exc), "round_trip", {"detail": str(exc)})
        )
        return
    receipt.checked.append("round trip")
    # Why one after the other: without its text a page reads in a millisecond.
    facts = pdf_facts(rendered, what="rendered ", text=False)
    if facts.pages:
        _thumbnails(receipt, rendered, tools, thumbs, facts.pages)
    receipt.pages = facts.pages
    # Why only glyph problems: LibreOffice's export is ours, its fonts are embedded.
    receipt.problems += [p for p in facts.problems if p.kind == "text"]


def _thumbnails(receipt: Receipt, pdf: Path, tools: Tools, thumbs: Path | None, pages: int) -> None:
    if thumbs is None:
        return
    if tools.pdftoppm is None:
        receipt.problems.append(
            Problem(
                "skipped",
                "thumbnails",
                "poppler is not installed (Debian: apt-get install poppler-utils)",
                "no_poppler",
            )
        )
        return
    try:
        made = thumbnails(tools, pdf, thumbs, receipt.sha256[:16], min(pages, THUMBNAILS))
    except RenderError as exc:
        receipt.problems.append(
            Problem("opens", "render", str(exc), "render", {"detail": str(exc)})
        )
        return
    receipt.checked.append("thumbnails")
    receipt.thumbnails = [str(p) for p in made]
