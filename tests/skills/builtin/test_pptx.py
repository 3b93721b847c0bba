"""The pptx skill's scripts, run as the agent runs them: ``python scripts/X.py ...``."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.oxml.ns import qn

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script

SCRIPTS = BUILTIN / "pptx" / "scripts"
OUTLINE = """# 季度业务回顾 Quarterly Review
2024 年第三季度 · 销售部
> 开场：感谢大家参加。

## 本季度亮点
- 收入增长 18%
  - 华东区贡献最大
    - 上海、杭州两地新客户
- New markets: Chengdu and Xi'an
> 强调华东区的增长来源。
> Mention the two new markets.

## 收入趋势
![各月收入（万元）](images/chart.png)
> 图表来自财务部。

## Next steps
- Hire two account managers
- Launch the partner programme
"""


def script(name: str, *args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / f"{name}.py", *args, timeout=timeout)


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from PIL import Image, ImageDraw

    folder = tmp_path_factory.mktemp("pptx")
    (folder / "images").mkdir()
    image = Image.new("RGB", (640, 400), (240, 244, 250))
    draw = ImageDraw.Draw(image)
    for i, height in enumerate([120, 200, 260, 180, 320]):
        draw.rectangle([60 + i * 110, 360 - height, 140 + i * 110, 360], fill=(31, 78, 120))
    image.save(folder / "images" / "chart.png")
    (folder / "大纲.md").write_text(OUTLINE, encoding="utf-8")
    done = script("outline_to_deck", folder / "大纲.md", "-o", folder / "演示.pptx")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"wrote {folder / '演示.pptx'} (4 slides, 6 bullets, 3 with notes, 1 images)"
    )
    return folder / "演示.pptx"


def test_deck_has_title_bullets_notes_and_image(deck: Path) -> None:
    prs = Presentation(str(deck))
    title, bullets, picture, last = prs.slides
    assert title.shapes.title.text == "季度业务回顾 Quarterly Review"
    assert title.placeholders[1].text == "2024 年第三季度 · 销售部"
    body = bullets.placeholders[1].text_frame.paragraphs
    assert [(p.level, p.text) for p in body] == [
        (0, "收入增长 18%"),
        (1, "华东区贡献最大"),
        (2, "上海、杭州两地新客户"),
        (0, "New markets: Chengdu and Xi'an"),
    ]
    assert bullets.notes_slide.notes_text_frame.text == (
        "强调华东区的增长来源。\nMention the two new markets."
    )
    (pic,) = [s for s in picture.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert pic.image.content_type == "image/png" and pic.width <= prs.slide_width
    assert not last.has_notes_slide
    # The Chinese runs carry an East-Asian typeface, so no viewer falls back to boxes.
    run = body[0].runs[0]._r
    assert run.find(qn("a:rPr")).find(qn("a:ea")).get("typeface") == "Microsoft YaHei"


def test_extract_text_round_trips_the_outline(deck: Path) -> None:
    done = script("extract_deck_text", deck)
    assert done.returncode == 0, done.stderr
    expected = OUTLINE.replace(
        "![各月收入（万元）](images/chart.png)", "<!-- picture: 各月收入（万元） -->"
    )
    assert done.stdout == expected
    data = json.loads(script("extract_deck_text", deck, "--format", "json").stdout)
    assert [s["title"] for s in data["slides"]] == [
        "季度业务回顾 Quarterly Review",
        "本季度亮点",
        "收入趋势",
        "Next steps",
    ]
    assert data["slides"][2]["pictures"] == ["各月收入（万元）"]
    assert data["slides"][0]["notes"] == "开场：感谢大家参加。"


def test_json_outline_with_nested_bullets(tmp_path: Path) -> None:
    outline = {
        "title": "计划",
        "slides": [
            {
                "title": "步骤",
                "bullets": ["一", {"text": "二", "children": ["二点一"]}],
                "notes": "说慢一点",
            }
        ],
    }
    (tmp_path / "o.json").write_text(json.dumps(outline, ensure_ascii=False), "utf-8")
    assert script("outline_to_deck", tmp_path / "o.json", "-o", tmp_path / "d.pptx").returncode == 0
    slide = Presentation(str(tmp_path / "d.pptx")).slides[1]
    assert [(p.level, p.text) for p in slide.placeholders[1].text_frame.paragraphs] == [
        (0, "一"), (0, "二"), (1, "二点一"),
    ]  # fmt: skip
    assert slide.notes_slide.notes_text_frame.text == "说慢一点"


@pytest.mark.skipif(
    not (shutil.which("soffice") and shutil.which("pdftoppm")),
    reason="needs LibreOffice and pdftoppm",
)
def test_first_slide_renders_to_a_picture(deck: Path) -> None:
    """The picture a person judges: saved under the temp folder as a test artifact."""
    artifacts = Path(tempfile.gettempdir()) / "workhearth-test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copyfile(deck, work / "deck.pptx")
        subprocess.run(
            ["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
             "--convert-to", "pdf", "--outdir", str(work), str(work / "deck.pptx")],
            capture_output=True, timeout=300, check=True,
        )  # fmt: skip
        subprocess.run(
            ["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile",
             str(work / "deck.pdf"), str(artifacts / "pptx-first-slide")],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    png = artifacts / "pptx-first-slide.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000  # a blank 16:9 page compresses to far less


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("outline_to_deck", ["missing.md", "-o", "{out}"], "no such file"),
        ("outline_to_deck", ["{no_image}", "-o", "{out}"], "no such image"),
        ("outline_to_deck", ["{orphan}", "-o", "{out}"], "needs a '## ' slide"),
        ("outline_to_deck", ["{bad_json}", "-o", "{out}"], "invalid JSON"),
        ("outline_to_deck", ["{md}", "-o", "{md}"], "must end in .pptx"),
        ("extract_deck_text", ["{md}"], "expected a .pptx"),
        ("extract_deck_text", ["{fake}"], "not a readable .pptx"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, name: str, args: list[str], says: str
) -> None:
    paths = {
        "md": tmp_path / "ok.md",
        "no_image": tmp_path / "img.md",
        "orphan": tmp_path / "orphan.md",
        "bad_json": tmp_path / "b.json",
        "fake": tmp_path / "fake.pptx",
        "out": tmp_path / "out.pptx",
    }
    paths["md"].write_text("# T\n## S\n- a\n", "utf-8")
    paths["no_image"].write_text("# T\n## S\n![x](nope.png)\n", "utf-8")
    paths["orphan"].write_text("- a bullet before any slide\n", "utf-8")
    paths["bad_json"].write_text("[1,", "utf-8")
    paths["fake"].write_text("not a zip", "utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    done = script(name, *(a.format(**paths) for a in args))
    assert says in one_error_line(done, name)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_existing_output_needs_force(tmp_path: Path) -> None:
    (tmp_path / "o.md").write_text("# T\n", "utf-8")
    (tmp_path / "d.pptx").write_text("keep", "utf-8")
    done = script("outline_to_deck", tmp_path / "o.md", "-o", tmp_path / "d.pptx")
    assert "--force" in one_error_line(done, "outline_to_deck")
    assert (tmp_path / "d.pptx").read_text("utf-8") == "keep"
