"""md_to_pdf.py keeps what md_to_docx keeps: column alignment, bold in table cells, block
quotes; and its CJK font subsets are cached between runs. Read back with poppler and pypdf."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.skills.builtin.helpers import BUILTIN, run_script

SCRIPT = BUILTIN / "pdf" / "scripts" / "md_to_pdf.py"

REPORT = """# 季度报告

正文段落：收入稳定增长。

> 注意：本报告仅供内部使用。

| 城市 | 人口 | 增长率 |
| --- | ---: | :---: |
| **北京** | 2,189 | 1.2% |
| 上海 | 12,487 | 0.8% |
"""

pytestmark = pytest.mark.skipif(
    not (shutil.which("pdftotext") and shutil.which("pdftoppm")), reason="needs poppler-utils"
)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    source = tmp_path / "report.md"
    source.write_text(REPORT, encoding="utf-8")
    out = tmp_path / "report.pdf"
    result = run_script(SCRIPT, source, "-o", out, "--font-cache", tmp_path / "fonts")
    assert result.returncode == 0, result.stderr
    if "font " not in result.stdout:
        pytest.skip("no CJK font on this machine")
    return out


def words(path: Path) -> list[tuple[str, float, float, float, float]]:
    """(word, xMin, yMin, xMax, yMax) in points, as poppler lays the page out."""
    html = subprocess.run(
        ["pdftotext", "-bbox", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    found = re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
        html,
    )
    return [(w, float(a), float(b), float(c), float(d)) for a, b, c, d, w in found]


def box(path: Path, text: str) -> tuple[float, float, float, float]:
    hits = [w[1:] for w in words(path) if w[0] == text]
    assert hits, f"{text!r} not on the page: {[w[0] for w in words(path)]}"
    return hits[0]


def test_right_and_centre_aligned_columns(report: Path) -> None:
    short, long = box(report, "2,189"), box(report, "12,487")
    # Right-aligned: the right edges meet, the left edges do not.
    assert abs(short[2] - long[2]) < 1.0, (short, long)
    assert long[0] < short[0] - 3
    # Left-aligned first column: the left edges meet.
    assert abs(box(report, "北京")[0] - box(report, "上海")[0]) < 1.0
    # Centred: the centres meet, whatever the widths.
    head, cell = box(report, "增长率"), box(report, "1.2%")
    assert abs((head[0] + head[2]) / 2 - (cell[0] + cell[2]) / 2) < 1.5, (head, cell)


def test_bold_inside_a_table_cell(report: Path) -> None:
    fonts: dict[str, set[str]] = {}

    def visit(text, cm, tm, font, size) -> None:
        if font is not None and text.strip():
            fonts.setdefault(text.strip(), set()).add(str(font.get("/BaseFont")))

    PdfReader(report).pages[0].extract_text(visitor_text=visit)
    assert any("Bold" in f for f in fonts.get("北京", ())), fonts
    assert not any("Bold" in f for f in fonts.get("上海", ())), fonts


def test_block_quote_is_indented_grey_and_barred(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    body, quote = box(report, "正文段落：收入稳定增长。"), box(report, "注意：本报告仅供内部使用。")
    assert quote[0] > body[0] + 10, (body, quote)
    subprocess.run(
        ["pdftoppm", "-png", "-r", "144", "-f", "1", "-l", "1", str(report), str(tmp_path / "p")],
        check=True,
    )
    png = next(tmp_path.glob("p-*.png"))
    scale = 2.0
    with Image.open(png) as image:
        grey = image.convert("L")

        def darkest(x1: float, y1: float, x2: float, y2: float) -> int:
            crop = grey.crop((int(x1 * scale), int(y1 * scale), int(x2 * scale), int(y2 * scale)))
            return min(crop.tobytes())

        # Body text is black; the quote's text is grey, not black and not blank.
        assert darkest(*body) < 40
        assert 40 <= darkest(*quote) < 180
        # A bar stands left of the quote, between the body's left edge and the quote's.
        assert darkest(body[0], quote[1], quote[0] - 2, quote[3]) < 235


def test_font_subsets_are_cached_between_runs(tmp_path: Path) -> None:
    source = tmp_path / "a.md"
    source.write_text("# 标题\n\n第一次运行。", encoding="utf-8")
    cache = tmp_path / "fonts"
    first = run_script(SCRIPT, source, "-o", tmp_path / "a.pdf", "--font-cache", cache)
    assert first.returncode == 0, first.stderr
    if "font " not in first.stdout:
        pytest.skip("no CJK font on this machine")
    made = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.*tf")}
    assert made, list(cache.iterdir())
    # Same characters: the subsets are reused as they are.
    again = run_script(SCRIPT, source, "-o", tmp_path / "b.pdf", "--font-cache", cache)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in cache.glob("*.*tf")} == made
    # New characters: the regular face's subset grows, the text still comes out whole.
    source.write_text("# 标题\n\n鳄鱼与麒麟。", encoding="utf-8")
    grown = run_script(SCRIPT, source, "-o", tmp_path / "c.pdf", "--font-cache", cache)
    assert grown.returncode == 0, grown.stderr
    assert "鳄鱼与麒麟" in PdfReader(tmp_path / "c.pdf").pages[0].extract_text()
    assert {p.name for p in cache.glob("*.*tf")} != set(made)
