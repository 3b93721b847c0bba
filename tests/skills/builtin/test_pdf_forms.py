"""PDF forms filled in Chinese stay readable: as filled, flattened, merged and split.

Each result is opened the way a user would: poppler (pdftotext, pdftoppm) and `hearth check`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    BooleanObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NumberObject,
    TextStringObject,
)

from tests.skills.builtin.helpers import BUILTIN, run_script

SCRIPTS = BUILTIN / "pdf" / "scripts"
HEARTH = Path(sys.executable).with_name("hearth")
VALUES = {"姓名": "张三", "department": "财务部", "备注": "第一行备注，内容较长，需要换行显示。"}

pytestmark = pytest.mark.skipif(
    not (shutil.which("pdftotext") and shutil.which("pdftoppm")), reason="needs poppler-utils"
)


def script(name: str, *args: object) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / name, *args, timeout=180)


def chinese_form(path: Path) -> Path:
    """Two pages: 姓名 and department on page 1, a multi-line 备注 on page 2; /Helv only."""
    writer = PdfWriter()
    fields = ArrayObject()
    layout = [
        [("姓名", [72, 700, 300, 722], 0), ("department", [72, 660, 300, 682], 0)],
        [("备注", [72, 600, 250, 700], 1 << 12)],
    ]
    for widgets in layout:
        page = writer.add_blank_page(595, 842)
        annots = ArrayObject()
        for name, rect, flags in widgets:
            widget = DictionaryObject(
                {
                    NameObject("/Type"): NameObject("/Annot"),
                    NameObject("/Subtype"): NameObject("/Widget"),
                    NameObject("/FT"): NameObject("/Tx"),
                    NameObject("/T"): TextStringObject(name),
                    NameObject("/Ff"): NumberObject(flags),
                    NameObject("/Rect"): ArrayObject(FloatObject(v) for v in rect),
                    NameObject("/F"): NumberObject(4),
                    NameObject("/DA"): TextStringObject("/Helv 12 Tf 0 g"),
                    NameObject("/P"): page.indirect_reference,
                }
            )
            ref = writer._add_object(widget)
            annots.append(ref)
            fields.append(ref)
        page[NameObject("/Annots")] = annots
    helv = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    writer._root_object[NameObject("/AcroForm")] = DictionaryObject(
        {
            NameObject("/Fields"): fields,
            NameObject("/DA"): TextStringObject("/Helv 12 Tf 0 g"),
            NameObject("/DR"): DictionaryObject(
                {NameObject("/Font"): DictionaryObject({NameObject("/Helv"): helv})}
            ),
            NameObject("/NeedAppearances"): BooleanObject(False),
        }
    )
    writer.write(path)
    return path


def poppler_text(path: Path) -> str:
    done = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    )
    return done.stdout


def ink_in(png: Path, box: tuple[float, float, float, float], dpi: int = 72) -> int:
    """Dark pixels inside a PDF-point box (x1, y1, x2, y2 on an A4 page) of a rendered page."""
    from PIL import Image

    scale = dpi / 72
    x1, y1, x2, y2 = box
    with Image.open(png) as image:
        crop = image.convert("L").crop(
            (int(x1 * scale), int((842 - y2) * scale), int(x2 * scale), int((842 - y1) * scale))
        )
        return sum(1 for g in crop.tobytes() if g < 128)


def rendered(path: Path, tmp: Path) -> list[Path]:
    prefix = tmp / f"{path.stem}-png"
    subprocess.run(["pdftoppm", "-png", "-r", "72", str(path), str(prefix)], check=True)
    return sorted(tmp.glob(f"{prefix.name}-*.png"))


def hearth_check(path: Path, home: Path) -> dict:
    env = {**os.environ, "HEARTH_HOME": str(home)}
    done = subprocess.run(
        [str(HEARTH), "check", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)[0]


def assert_reads_chinese(path: Path, tmp: Path, pages: list[int]) -> None:
    """poppler extracts and draws the values; hearth check finds no '??' and no bare font."""
    text = poppler_text(path)
    for value in ("张三", "财务部"):
        assert value in text, text
    assert "??" not in text
    report = hearth_check(path, tmp / "home")
    problems = [p for p in report["problems"] if p.get("kind") in ("text", "fonts")]
    assert problems == [], report["problems"]
    pngs = rendered(path, tmp)
    if 1 in pages:
        first = pngs[pages.index(1)]
        assert ink_in(first, (72, 700, 300, 722)) > 40, "姓名 is blank when rendered"
        assert ink_in(first, (72, 660, 300, 682)) > 40, "department is blank when rendered"


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    form = chinese_form(tmp_path / "form.pdf")
    out = tmp_path / "filled.pdf"
    sets = [arg for name, value in VALUES.items() for arg in ("--set", f"{name}={value}")]
    result = script("fill_form.py", form, "-o", out, *sets)
    assert result.returncode == 0, result.stderr
    return out


def test_filled_chinese_fields_show_in_poppler_and_pass_the_check(
    filled: Path, tmp_path: Path
) -> None:
    assert_reads_chinese(filled, tmp_path, pages=[1, 2])
    reader = PdfReader(filled)
    assert reader.get_fields()["姓名"]["/V"] == "张三"
    # The drawn appearance is what viewers show: no redraw in /Helv, no '??' inside it.
    need = reader.trailer["/Root"]["/AcroForm"].get("/NeedAppearances")
    assert getattr(need, "value", need) in (None, False)
    for page in reader.pages:
        for ref in page["/Annots"]:
            stream = ref.get_object()["/AP"]["/N"].get_object()
            assert b"(??)" not in stream.get_data()
            font = next(iter(stream["/Resources"]["/Font"].values())).get_object()
            assert "/FontFile3" in font["/DescendantFonts"][0]["/FontDescriptor"] or (
                "/FontFile2" in font["/DescendantFonts"][0]["/FontDescriptor"]
            )
    assert "第一行备注" in poppler_text(filled).replace("\n", "").replace(" ", "")


def test_flatten_draws_the_chinese_text(tmp_path: Path) -> None:
    form = chinese_form(tmp_path / "form.pdf")
    out = tmp_path / "flat.pdf"
    result = script(
        "fill_form.py",
        form,
        "-o",
        out,
        "--set",
        "姓名=张三",
        "--set",
        "department=财务部",
        "--flatten",
    )
    assert result.returncode == 0, result.stderr
    reader = PdfReader(out)
    assert "/AcroForm" not in reader.trailer["/Root"]
    assert all("/Annots" not in page for page in reader.pages)
    assert "张三" in reader.pages[0].extract_text()
    assert_reads_chinese(out, tmp_path, pages=[1, 2])


def test_merge_and_split_keep_the_filled_form(filled: Path, tmp_path: Path) -> None:
    merged = tmp_path / "merged.pdf"
    result = script("merge.py", filled, f"{filled}:1", "-o", merged)
    assert result.returncode == 0, result.stderr
    assert len(PdfReader(merged).pages) == 3
    assert "/AcroForm" in PdfReader(merged).trailer["/Root"]
    assert_reads_chinese(merged, tmp_path / "m", pages=[1, 2, 3])
    assert poppler_text(merged).count("张三") == 2

    parts = tmp_path / "parts"
    result = script("split.py", merged, "-o", parts)
    assert result.returncode == 0, result.stderr
    first = parts / "merged-p3.pdf"
    reader = PdfReader(first)
    assert "姓名" in (reader.get_fields() or {})
    assert_reads_chinese(first, tmp_path / "s", pages=[1])
