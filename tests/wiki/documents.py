"""Real office files made in the test (python-docx, openpyxl, python-pptx, fpdf2), each
holding a word the test then looks for in what the model was given."""

from __future__ import annotations

from pathlib import Path


def make_docx(path: Path, heading: str, text: str) -> Path:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    document.add_paragraph(text)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "region", "sales"
    table.cell(1, 0).text, table.cell(1, 1).text = "north", "42"
    document.save(str(path))
    return path


def make_xlsx(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def make_pptx(path: Path, slides: list[tuple[str, str]]) -> Path:
    from pptx import Presentation

    deck = Presentation()
    for title, bullet in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = bullet
    deck.save(str(path))
    return path


def make_pdf(path: Path, pages: list[str]) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    pdf.output(str(path))
    return path


def make_mixed_folder(folder: Path) -> dict[str, str]:
    """A folder of documents; returns ``file -> a word only that file holds``."""
    reports = folder / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    make_docx(reports / "plan.docx", "Quarterly plan", "We open the Lisbon office in spring.")
    make_xlsx(reports / "budget.xlsx", ["item", "cost"], [["servers", 1200], ["zanzibar", 7]])
    make_pptx(reports / "pitch.pptx", [("Why us", "Fast kettles"), ("Roadmap", "Marmalade")])
    make_pdf(reports / "memo.pdf", ["First page: quokka.", "Second page: pangolin."])
    (folder / "notes.md").write_text("# Notes\n\nCall the harbourmaster.\n")
    return {
        "reports/plan.docx": "Lisbon",
        "reports/budget.xlsx": "zanzibar",
        "reports/pitch.pptx": "Marmalade",
        "reports/memo.pdf": "pangolin",
        "notes.md": "harbourmaster",
    }
