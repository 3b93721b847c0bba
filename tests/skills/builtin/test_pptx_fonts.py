"""Issue #21 defect 6: mixed Chinese and Latin text in a deck from outline_to_deck.py.

Every run names its Latin (a:latin) and East-Asian (a:ea) typeface, and so does the deck's
theme, so no text falls back per character to another family; LibreOffice renders the slide
to a PNG (kept under the temp folder as a test artifact, for a person to look at).

What remains visible in LibreOffice is its own "space between Asian and non-Asian text"
(editeng adds a fifth of the line height at each change of script: ``2026 年``); its pptx
import maps no OOXML attribute to it, so no deck can switch it off.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.skills.builtin.helpers import BUILTIN, run_script

SCRIPTS = BUILTIN / "pptx" / "scripts"
MIXED = "2026年收入（+25%）"
OUTLINE = f"""# {MIXED}
第一季度 Q1 · {MIXED}
> 开场 {MIXED}

## {MIXED}
- {MIXED} Revenue
  - 华东 East 区域
> 备注 {MIXED}

## 图 Chart
![{MIXED}](chart.png)
"""
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from PIL import Image

    folder = tmp_path_factory.mktemp("pptx-fonts")
    Image.new("RGB", (320, 200), (31, 78, 120)).save(folder / "chart.png")
    (folder / "outline.md").write_text(OUTLINE, "utf-8")
    return folder


def build(folder: Path, name: str, *options: str) -> Path:
    done = run_script(
        SCRIPTS / "outline_to_deck.py", folder / "outline.md", "-o", folder / name, *options
    )
    assert done.returncode == 0, done.stderr
    return folder / name


def _parts(deck: Path, prefix: str) -> dict[str, str]:
    with zipfile.ZipFile(deck) as zf:
        return {n: zf.read(n).decode() for n in zf.namelist() if n.startswith(prefix)}


def test_every_run_names_its_latin_and_east_asian_typeface(folder: Path) -> None:
    from lxml import etree

    deck = build(folder, "default.pptx")
    parts = _parts(deck, "ppt/slides/slide") | _parts(deck, "ppt/notesSlides/notesSlide")
    texts = []
    for name, xml in parts.items():
        if not name.endswith(".xml"):
            continue
        for run_ in etree.fromstring(xml.encode()).iter(f"{A}r"):
            rpr = run_.find(f"{A}rPr")
            typefaces = [
                child.get("typeface") for child in rpr if child.tag in (f"{A}latin", f"{A}ea")
            ]
            assert typefaces == ["Calibri", "Microsoft YaHei"], (name, run_.findtext(f"{A}t"))
            texts.append(run_.findtext(f"{A}t"))
    assert sum(MIXED in text for text in texts) == 7  # title, subtitle, bullet, caption, notes…


def test_the_theme_names_the_same_pair(folder: Path) -> None:
    """Text without fonts of its own (typed into the deck later) takes the theme's: before,
    Calibri with no East-Asian font and 宋体 (a serif) for Simplified Chinese."""
    deck = build(folder, "noto.pptx", "--font", "Noto Sans", "--ea-font", "Noto Sans CJK SC")
    themes = _parts(deck, "ppt/theme/")
    assert len(themes) == 2  # the slide master's and the notes master's
    for xml in themes.values():
        for scheme in ("majorFont", "minorFont"):
            body = re.search(rf"<a:{scheme}>(.*?)</a:{scheme}>", xml).group(1)
            assert '<a:latin typeface="Noto Sans"/>' in body
            assert '<a:ea typeface="Noto Sans CJK SC"/>' in body
            assert '<a:font script="Hans" typeface="Noto Sans CJK SC"/>' in body


@pytest.mark.skipif(
    not (shutil.which("soffice") and shutil.which("pdftoppm") and shutil.which("pdffonts")),
    reason="needs LibreOffice and poppler",
)
def test_libreoffice_draws_the_mixed_title_in_one_latin_and_one_cjk_family(folder: Path) -> None:
    deck = build(folder, "render.pptx")
    artifacts = Path(tempfile.gettempdir()) / "workhearth-test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            ["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
             "--convert-to", "pdf", "--outdir", str(work), str(deck)],
            capture_output=True, timeout=300, check=True,
        )  # fmt: skip
        pdf = work / "render.pdf"
        fonts = subprocess.run(
            ["pdffonts", "-f", "1", "-l", "2", str(pdf)],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        text = subprocess.run(
            ["pdftotext", "-f", "1", "-l", "1", str(pdf), "-"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        subprocess.run(
            ["pdftoppm", "-png", "-r", "80", "-f", "2", "-l", "2", "-singlefile", str(pdf),
             str(artifacts / "pptx-mixed-cjk")],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    names = {line.split()[0].split("+")[-1] for line in fonts.splitlines()[2:] if line.strip()}
    names -= {"LiberationSans"}  # the master's bullet character (Arial)
    families = {name.split("-")[0] for name in names}
    assert not any("Serif" in name for name in names), names
    assert len(families) == 2 and any("CJK" in f for f in families), names
    assert "年收入" in text and "+25%" in text
    assert (artifacts / "pptx-mixed-cjk.png").stat().st_size > 10_000
