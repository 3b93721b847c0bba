"""A PDF's facts: it parses, its pages, its fonts embedded, text that can be extracted,
and no glyph drawn as nothing (.notdef) or as '?' standing in for the real text."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PdfReadError
from pypdf.generic import ContentStream, DictionaryObject, IndirectObject

from workhearth.check.glyphs import QUESTION_RUN
from workhearth.check.receipt import Problem

# Why limits: text extraction costs per page; the first pages show what a reader sees.
TEXT_PAGES = 20
TEXT_CHARS = 4000
_EMBEDDED = ("/FontFile", "/FontFile2", "/FontFile3")


@dataclass
class PdfFacts:
    pages: int = 0
    text: str = ""
    problems: list[Problem] = field(default_factory=list)


def _resolve(obj: Any) -> Any:
    return obj.get_object() if isinstance(obj, IndirectObject) else obj


def _embedded(font: DictionaryObject) -> bool:
    subtype = font.get("/Subtype")
    if subtype == "/Type3":
        return True  # glyphs are drawn by the font's own content streams
    if subtype == "/Type0":
        descendants = _resolve(font.get("/DescendantFonts"))
        if not descendants:
            return False
        font = _resolve(descendants[0])
    descriptor = _resolve(font.get("/FontDescriptor"))
    return bool(descriptor) and any(k in descriptor for k in _EMBEDDED)


def _fonts(page: Any) -> dict[str, DictionaryObject]:
    resources = _resolve(page.get("/Resources")) or {}
    fonts = _resolve(resources.get("/Font")) or {}
    return {str(name): _resolve(ref) for name, ref in fonts.items()}


def _notdef_count(page: Any, reader: PdfReader, fonts: dict[str, DictionaryObject]) -> int:
    """Glyph id 0 (.notdef: an empty box, or nothing) drawn with a two-byte CID font."""
    identity = {n for n, f in fonts.items() if f.get("/Encoding") in ("/Identity-H", "/Identity-V")}
    if not identity:
        return 0
    contents = page.get_contents()
    if contents is None:
        return 0
    count, current = 0, None
    for operands, op in ContentStream(contents, reader).operations:
        if op == b"Tf" and operands:
            current = str(operands[0])
        elif current in identity and op in (b"Tj", b"'", b'"', b"TJ"):
            for item in operands[-1] if op == b"TJ" else operands[-1:]:
                data = getattr(item, "original_bytes", None)
                if isinstance(data, bytes):
                    count += sum(
                        1 for i in range(0, len(data) - 1, 2) if data[i : i + 2] == b"\0\0"
                    )
    return count


def pdf_facts(path: Path, *, what: str = "", text: bool = True) -> PdfFacts:
    """``what`` prefixes ``where`` ("rendered " for LibreOffice's export of an Office file).

    ``text=False`` skips extracting the text (and so the '??' check), the costly part of
    reading a page: LibreOffice's export draws the text the Office file holds, and that
    text was read (and checked) from the file itself."""
    facts = PdfFacts()
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            facts.problems.append(
                Problem("opens", "", "the PDF is encrypted with a password", "pdf_encrypted")
            )
            return facts
        pages = list(reader.pages)
    except (PdfReadError, OSError, ValueError, KeyError, TypeError) as exc:
        facts.problems.append(Problem("opens", "", f"not a readable PDF: {exc}", "pdf_unreadable"))
        return facts
    facts.pages = len(pages)
    unembedded: dict[str, int] = {}
    texts: list[str] = []
    for number, page in enumerate(pages, 1):
        try:
            fonts = _fonts(page)
            for font in fonts.values():
                name = str(font.get("/BaseFont", "?")).lstrip("/")
                if not _embedded(font):
                    unembedded.setdefault(name, number)
            blanks = _notdef_count(page, reader, fonts)
            if text and number <= TEXT_PAGES:
                texts.append(page.extract_text() or "")
        except (PdfReadError, ValueError, KeyError, TypeError, AttributeError) as exc:
            facts.problems.append(
                Problem(
                    "opens", f"{what}page {number}", f"cannot be read: {exc}", "page_unreadable"
                )
            )
            continue
        if blanks:
            facts.problems.append(
                Problem(
                    "text",
                    f"{what}page {number}",
                    f"{blanks} characters have no glyph (drawn as blanks)",
                    "notdef",
                    {"n": blanks},
                )
            )
        runs = QUESTION_RUN.findall(texts[-1]) if text and number <= TEXT_PAGES else []
        if runs:
            facts.problems.append(
                Problem(
                    "text",
                    f"{what}page {number}",
                    f"'{runs[0]}' stands in for text (a font without the glyphs?)",
                    "question_marks",
                    {"text": runs[0]},
                )
            )
    for name, number in unembedded.items():
        facts.problems.append(
            Problem(
                "fonts",
                f"{what}page {number}",
                f"font {name} is not embedded",
                "font_not_embedded",
                {"font": name},
            )
        )
    facts.text = "\n".join(texts)[:TEXT_CHARS]
    return facts
