"""Office files made on purpose, good and broken, for the ``hearth check`` tests.

Each maker writes one file and returns its path. The broken ones are broken in one
way only, so a test can assert the exact problem kind and where it is.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

from workhearth.check import Receipt

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def failing(receipt: Receipt) -> list[tuple[str, str]]:
    """(kind, where) of every problem that fails the file, in order."""
    return [(p.kind, p.where) for p in receipt.problems if p.fails]


def rewrite_zip(path: Path, edit: Callable[[str, bytes], bytes | None]) -> Path:
    """Rewrite ``path``'s parts through ``edit(name, data)``; None drops the part."""
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = edit(info.filename, src.read(info.filename))
            if data is not None:
                dst.writestr(info.filename, data)
    tmp.replace(path)
    return path


def add_part(path: Path, name: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(name, data)
    return path


# --- Word ---------------------------------------------------------------------------


def docx(path: Path, paragraphs: int = 3, text: str = "A short report paragraph.") -> Path:
    from docx import Document

    doc = Document()
    doc.add_heading("Quarterly report", level=1)
    for n in range(paragraphs):
        doc.add_paragraph(f"{text} ({n + 1})")
    doc.save(str(path))
    return path


def docx_pages(path: Path, pages: int) -> Path:
    """About ``pages`` pages: a heading, paragraphs and a page break per page."""
    from docx import Document

    doc = Document()
    body = "Revenue grew in every region this quarter, led by the east. " * 12
    for page in range(pages):
        doc.add_heading(f"Section {page + 1}", level=1)
        for _ in range(3):
            doc.add_paragraph(body)
        if page < pages - 1:
            doc.add_page_break()
    doc.save(str(path))
    return path


def docx_dangling(path: Path) -> Path:
    """The document's styles relationship points at a part that is not in the zip."""
    docx(path)

    def edit(name: str, data: bytes) -> bytes | None:
        if name == "word/_rels/document.xml.rels":
            return data.replace(b'Target="styles.xml"', b'Target="missing.xml"')
        return data

    return rewrite_zip(path, edit)


def docx_malformed(path: Path) -> Path:
    docx(path)

    def edit(name: str, data: bytes) -> bytes | None:
        return data.replace(b"</w:body>", b"</w:bdy>") if name == "word/document.xml" else data

    return rewrite_zip(path, edit)


def docx_untyped(path: Path) -> Path:
    """A part whose extension has no Default and no Override in [Content_Types].xml."""
    return add_part(docx(path), "word/extra.bin", b"\0\1\2")


def docx_missing_glyph(path: Path) -> Path:
    return docx(path, paragraphs=1, text="Private use: \ue000 here")


def docx_wide_table(path: Path) -> Path:
    from docx import Document
    from docx.shared import Cm

    doc = Document()
    table = doc.add_table(rows=2, cols=4)
    table.autofit = False
    for col in table.columns:
        col.width = Cm(8)  # 32 cm on a page whose text is about 16 cm wide
        for cell in col.cells:
            cell.width = Cm(8)
            cell.text = "wide"
    doc.save(str(path))
    return path


def not_a_zip(path: Path) -> Path:
    path.write_bytes(b"This is plain text with an Office name.\n")
    return path


# --- Spreadsheets -------------------------------------------------------------------


def xlsx(path: Path, rows: int = 5) -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Region", "Amount"])
    for n in range(rows):
        ws.append([f"Region {n + 1}", 100 + n])
    wb.save(path)
    return path


def xlsx_formula(path: Path, cached: str | None, formula: str = "1/0") -> Path:
    """``Sales!B2`` holds ``=formula``; with ``cached`` its stored value is that error
    (as Excel or LibreOffice would save it), without it the formula has no value."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws["A1"] = "Ratio"
    ws["B1"] = 3
    ws["A2"] = "Broken"
    ws["B2"] = f"={formula}"
    wb.save(path)
    if cached is None:
        return path

    def edit(name: str, data: bytes) -> bytes | None:
        if name != "xl/worksheets/sheet1.xml":
            return data
        text = data.decode()
        cell = re.search(r'<c r="B2"[^>]*>.*?</c>', text)
        assert cell, text
        fixed = f'<c r="B2" t="e"><f>{formula}</f><v>{cached}</v></c>'
        return (text[: cell.start()] + fixed + text[cell.end() :]).encode()

    return rewrite_zip(path, edit)


def xlsx_wide(path: Path, fit: bool) -> Path:
    """20 columns 30 characters wide (about 117 cm); ``fit`` sets fit-to-width."""
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    wb = Workbook()
    ws = wb.active
    ws.title = "Wide"
    for col in range(1, 21):
        ws.column_dimensions[get_column_letter(col)].width = 30
        ws.cell(1, col, f"Column {col}")
        ws.cell(2, col, col)
    if fit:
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
    wb.save(path)
    return path


def xlsx_chart(
    path: Path,
    rows: int,
    anchor: str,
    *,
    print_area: str | None = None,
    break_before: int | None = None,
    fit_width: bool = False,
) -> Path:
    """A table (a header and ``rows`` rows, columns A-F) and a bar chart of its totals
    (15 × 7.5 cm) at ``anchor``; ``break_before`` a manual page break above that row."""
    from openpyxl import Workbook
    from openpyxl.chart import BarChart, Reference
    from openpyxl.worksheet.pagebreak import Break

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Region", "Q1", "Q2", "Q3", "Q4", "Total"])
    for n in range(rows):
        ws.append([f"Region {n}", n, n + 1, n + 2, n + 3, 4 * n + 6])
    chart = BarChart()
    chart.title = "Totals"
    chart.add_data(Reference(ws, min_col=6, min_row=1, max_row=rows + 1), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=rows + 1))
    ws.add_chart(chart, anchor)
    if print_area:
        ws.print_area = print_area
    if break_before:
        ws.row_breaks.append(Break(id=break_before - 1))
    if fit_width:
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    wb.save(path)
    return path


# --- Slides -------------------------------------------------------------------------


def pptx(path: Path, slides: int = 1) -> Path:
    from pptx import Presentation
    from pptx.util import Cm, Pt

    deck = Presentation()
    for n in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        box = slide.shapes.add_textbox(Cm(2), Cm(2), Cm(20), Cm(3))
        box.text_frame.text = f"Slide {n + 1}: results"
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(28)
    deck.save(str(path))
    return path


def pptx_overflow(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Cm, Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    box = slide.shapes.add_textbox(Cm(2), Cm(2), Cm(10), Cm(2))
    box.name = "Crowded"
    box.text_frame.word_wrap = True
    box.text_frame.text = "Far too much text for a small box. " * 40
    box.text_frame.paragraphs[0].runs[0].font.size = Pt(18)
    deck.save(str(path))
    return path


# --- PDF ----------------------------------------------------------------------------


def pdf(path: Path, pages: int = 1, text: str = "A page of the report.") -> Path:
    """A PDF whose font (DejaVu Sans) is embedded."""
    from fpdf import FPDF

    doc = FPDF()
    doc.add_font("DejaVu", fname=str(FONT))
    doc.set_font("DejaVu", size=12)
    for n in range(pages):
        doc.add_page()
        doc.multi_cell(0, 8, f"Page {n + 1}. " + text)
    doc.output(str(path))
    return path


def pdf_helvetica(path: Path) -> Path:
    """Helvetica, one of the 14 standard fonts, which fpdf2 does not embed."""
    from fpdf import FPDF

    doc = FPDF()
    doc.add_page()
    doc.set_font("Helvetica", size=12)
    doc.cell(0, 10, "Plain Latin text in Helvetica.")
    doc.output(str(path))
    return path


def pdf_question_marks(path: Path) -> Path:
    """'??' where a name should be, as a font without the glyphs leaves it (the font is
    embedded, so the '??' is the only thing wrong)."""
    return pdf(path, text="Name: ?? Department: ???")


def pdf_encrypted(path: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    plain = pdf(path.with_name("plain-" + path.name))
    writer = PdfWriter()
    for page in PdfReader(plain).pages:
        writer.add_page(page)
    writer.encrypt("secret", algorithm="AES-256")
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst
