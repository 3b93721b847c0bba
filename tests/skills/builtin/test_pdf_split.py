"""pdf split.py as the pdf SKILL.md shows it: `split.py merged.pdf -o parts/` (issue 21, 5).

The parts are read back with poppler's pdftotext, as a user's viewer would show them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script

SPLIT = BUILTIN / "pdf" / "scripts" / "split.py"


def numbered(path: Path, pages: int) -> Path:
    """A PDF whose page i says 'page i' in Helvetica."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for i in range(1, pages + 1):
        page = writer.add_blank_page(595, 842)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
        )
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 24 Tf 72 720 Td (page {i}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def pdftotext(path: Path) -> str:
    if not shutil.which("pdftotext"):
        pytest.skip("poppler-utils is not installed (Debian: poppler-utils)")
    done = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_split_creates_the_output_folder(tmp_path: Path) -> None:
    merged = numbered(tmp_path / "merged.pdf", 3)
    proc = run_script(SPLIT, merged.name, "-o", "parts/", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    parts = tmp_path / "parts"
    assert sorted(p.name for p in parts.iterdir()) == [
        "merged-p1.pdf",
        "merged-p2.pdf",
        "merged-p3.pdf",
    ]
    assert pdftotext(parts / "merged-p2.pdf").strip() == "page 2"

    nested = tmp_path / "out" / "第二季度"
    proc = run_script(SPLIT, merged, "-o", nested, "--ranges", "1-2,3")
    assert proc.returncode == 0, proc.stderr
    assert pdftotext(nested / "merged-p1-2.pdf").split() == ["page", "1", "page", "2"]


def test_split_refuses_a_file_as_the_output_folder(tmp_path: Path) -> None:
    merged = numbered(tmp_path / "merged.pdf", 2)
    taken = tmp_path / "parts"
    taken.write_text("not a folder", encoding="utf-8")
    line = one_error_line(run_script(SPLIT, merged, "-o", taken), "split.py")
    assert "parts" in line and "not a folder" in line
    assert taken.read_text(encoding="utf-8") == "not a folder"
    # A bad range still writes nothing, not even the folder.
    missing = tmp_path / "never"
    one_error_line(run_script(SPLIT, merged, "-o", missing, "--ranges", "1,9"), "split.py")
    assert not missing.exists()
