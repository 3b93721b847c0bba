"""The built-in docx skill: every script runs on real files and its output opens with python-docx.

LibreOffice is slow, so it runs twice in this file: one PDF conversion (shared by the
text check and the rendered picture) and one .odt conversion that shows LibreOffice
reads the comments and tracked changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml.ns import qn
from docx.shared import Pt

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script
from workhearth.skills.metadata import read_examples
from workhearth.skills.validate import validate

SKILL = BUILTIN / "docx"
SCRIPTS = SKILL / "scripts"
SENTENCE = "本季度销售额增长了百分之十二，客户满意度明显提高。"
TASKS = ("md-to-docx", "fill-template", "extract-content", "ooxml-patch", "convert-to-pdf")

MARKDOWN = f"""# 季度报告 Quarterly Report

{SENTENCE} Revenue grew **strongly** in *every* region; see `sales.csv` and
[the dashboard](https://example.com/仪表盘).

## 要点 Highlights

- 客户满意度提高
  - 华东地区
  - 华南地区
- 成本下降

1. 准备数据
2. 生成报告
   1. 初稿
   2. 终稿

3. 审阅

## 销售数据

| 地区 | 销售额 | 增长 |
|:-----|------:|:----:|
| 华东 | 1,200 | 15% |
| 华南 | 980 | 8% |
| 华北 | 1,050 | 11% |

```python
def 合计(values):
    return sum(values)  # 求和
```

> 注意：数据截至 2024 年 6 月。

![销售图表 Sales chart](images/chart.png)

---

结论：继续保持。
"""


def script(
    name: str, *args: object, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / name, *args, env=env)


def write_chart(path: Path) -> None:
    from PIL import Image, ImageDraw

    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (640, 200), "white")
    draw = ImageDraw.Draw(image)
    colours = [(52, 101, 164), (78, 154, 6), (196, 160, 0), (204, 0, 0), (117, 80, 123)]
    for i, height in enumerate((70, 130, 100, 170, 150)):
        draw.rectangle([50 + i * 115, 185 - height, 130 + i * 115, 185], fill=colours[i])
    draw.line([30, 185, 620, 185], fill="black", width=3)
    image.save(path, dpi=(150, 150))


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Chinese Markdown sample converted once: 报告.docx (a Chinese file name on purpose)."""
    folder = tmp_path_factory.mktemp("docx-sample")
    write_chart(folder / "images" / "chart.png")
    (folder / "报告.md").write_text(MARKDOWN, encoding="utf-8")
    proc = script("md_to_docx.py", folder / "报告.md", "-o", folder / "报告.docx")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote ")
    return folder / "报告.docx"


@pytest.fixture(scope="module")
def soffice() -> str:
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if not found:
        pytest.skip(
            "LibreOffice is not installed (Debian: libreoffice-writer); .ci/run installs it"
        )
    return found


@pytest.fixture(scope="module")
def sample_pdf(sample: Path, soffice: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docx-pdf") / "报告.pdf"
    proc = script("convert_to_pdf.py", sample, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


# -- the skill folder ----------------------------------------------------------------------
def test_skill_validates_and_has_one_example_per_task() -> None:
    assert validate(SKILL) == []
    examples, problems = read_examples(SKILL)
    assert problems == []
    assert tuple(e.id for e in examples) == TASKS
    body = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    for script_file in (
        "md_to_docx",
        "fill_template",
        "extract_content",
        "ooxml_patch",
        "convert_to_pdf",
    ):
        assert (SCRIPTS / f"{script_file}.py").is_file()
        assert f"scripts/{script_file}.py" in body


def test_every_script_has_help() -> None:
    for path in sorted(SCRIPTS.glob("[!_]*.py")):
        proc = script(path.name, "--help")
        assert proc.returncode == 0, proc.stderr
        assert "usage:" in proc.stdout


# -- md-to-docx ----------------------------------------------------------------------------
def test_md_to_docx_carries_chinese_text_and_east_asian_font(sample: Path) -> None:
    document = docx.Document(str(sample))
    text = "\n".join(p.text for p in document.paragraphs)
    assert SENTENCE in text
    defaults = document.styles.element.find(qn("w:docDefaults"))
    fonts = defaults.find(qn("w:rPrDefault")).find(qn("w:rPr")).find(qn("w:rFonts"))
    assert fonts.get(qn("w:eastAsia")) == "Microsoft YaHei"
    # Why: a style pointing at the theme's (empty) East-Asian font would override the default.
    assert not [
        f for f in document.styles.element.iter(qn("w:rFonts")) if f.get(qn("w:eastAsiaTheme"))
    ]
    heading = document.styles["Heading 1"].element.find(qn("w:rPr")).find(qn("w:rFonts"))
    assert heading.get(qn("w:eastAsia")) == "Microsoft YaHei"


def test_md_to_docx_builds_headings_lists_tables_code_links_and_image(sample: Path) -> None:
    document = docx.Document(str(sample))
    paras = document.paragraphs
    headings = [(p.style.name, p.text) for p in paras if p.style.name.startswith("Heading")]
    assert headings == [
        ("Heading 1", "季度报告 Quarterly Report"),
        ("Heading 2", "要点 Highlights"),
        ("Heading 2", "销售数据"),
    ]
    assert document.core_properties.title == "季度报告 Quarterly Report"

    listed = {
        p.text: p._p.pPr.numPr for p in paras if p._p.pPr is not None and p._p.pPr.numPr is not None
    }
    assert listed["华东地区"].ilvl.val == 1 and listed["客户满意度提高"].ilvl.val == 0
    assert listed["初稿"].ilvl.val == 1
    # Why: a bullet list and a numbered list must not share numbering.
    assert listed["客户满意度提高"].numId.val != listed["准备数据"].numId.val

    (table,) = document.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["地区", "销售额", "增长"],
        ["华东", "1,200", "15%"],
        ["华南", "980", "8%"],
        ["华北", "1,050", "11%"],
    ]
    assert all(r.bold for r in table.rows[0].cells[0].paragraphs[0].runs)

    (code,) = [p for p in paras if p.style.name == "Code Block"]
    assert "def 合计(values):" in code.text and "# 求和" in code.text
    assert document.styles["Code Block"].font.name == "Consolas"

    intro = next(p for p in paras if SENTENCE in p.text)
    runs = {r.text: r for r in intro.runs}
    assert runs["strongly"].bold and runs["every"].italic
    assert runs["sales.csv"]._r.rPr.rFonts.get(qn("w:ascii")) == "Consolas"
    (link,) = intro._p.findall(qn("w:hyperlink"))
    assert document.part.rels[link.get(qn("r:id"))].target_ref == "https://example.com/仪表盘"

    blips = list(document.element.body.iter(qn("a:blip")))
    assert len(blips) == 1
    assert next(document.element.body.iter(qn("wp:docPr"))).get("descr") == "销售图表 Sales chart"
    assert document.inline_shapes[0].width <= document.sections[0].page_width


def test_md_to_docx_missing_image_is_an_error_or_a_placeholder(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# 标题\n\n![图](nope.png)\n", encoding="utf-8")
    out = tmp_path / "a.docx"
    line = one_error_line(script("md_to_docx.py", tmp_path / "a.md", "-o", out), "md_to_docx.py")
    assert "nope.png" in line and "--allow-missing-images" in line
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / "a.md"]

    proc = script("md_to_docx.py", tmp_path / "a.md", "-o", out, "--allow-missing-images")
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "nope.png" in proc.stderr
    text = "\n".join(p.text for p in docx.Document(str(out)).paragraphs)
    assert "[image not found: nope.png" in text


# -- fill-template -------------------------------------------------------------------------
def split_token(paragraph, before: str, parts: list[str], after: str) -> None:  # type: ignore[no-untyped-def]
    """Write a token the way Word often stores it: over several runs, the start in bold."""
    paragraph.add_run(before)
    for n, part in enumerate(parts):
        run = paragraph.add_run(part)
        run.bold = n == 0
    paragraph.add_run(after)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    document = docx.Document()
    split_token(document.add_paragraph(), "尊敬的 ", ["{{cli", "ent_", "name}}"], "：您好。")
    document.add_paragraph("日期：{{ date }}，地点：{{city}}。")
    cell = document.add_table(rows=1, cols=2).cell(0, 1)
    split_token(cell.paragraphs[0], "金额 ", ["{", "{amount}", "}"], " 元")
    section = document.sections[0]
    split_token(section.header.paragraphs[0], "合同 ", ["{{client", "_name}}"], "")
    split_token(section.footer.paragraphs[0], "第 1 页 ", ["{{", "date}}"], "")
    path = tmp_path / "模板.docx"
    document.save(str(path))
    return path


def test_fill_template_replaces_split_tokens_keeping_bold_everywhere(
    template: Path, tmp_path: Path
) -> None:
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"amount": 1200, "city": "上海", "unused": "x"}), encoding="utf-8")
    out = tmp_path / "合同.docx"
    proc = script(
        "fill_template.py", template, "-o", out,
        "--set", "client_name=星火科技", "--set", "date=2024-06-01", "--values", values, "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["replaced"] == {"amount": 1, "city": 1, "client_name": 2, "date": 2}
    assert report["missing"] == [] and report["unknown"] == ["unused"]

    document = docx.Document(str(out))
    section = document.sections[0]
    places = {
        "body": document.paragraphs[0],
        "table": document.tables[0].cell(0, 1).paragraphs[0],
        "header": section.header.paragraphs[0],
        "footer": section.footer.paragraphs[0],
    }
    assert places["body"].text == "尊敬的 星火科技：您好。"
    assert places["table"].text == "金额 1200 元"
    assert places["header"].text == "合同 星火科技"
    assert places["footer"].text == "第 1 页 2024-06-01"
    assert document.paragraphs[1].text == "日期：2024-06-01，地点：上海。"
    for where, value in (
        ("body", "星火科技"),
        ("table", "1200"),
        ("header", "星火科技"),
        ("footer", "2024-06-01"),
    ):
        (run,) = [r for r in places[where].runs if value in r.text]
        assert run.bold, where
        assert run.text == value, where
    assert "{{" not in json.dumps([p.text for p in places.values()], ensure_ascii=False)


def test_fill_template_refuses_missing_values_and_writes_nothing(
    template: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.docx"
    line = one_error_line(
        script("fill_template.py", template, "-o", out, "--set", "city=北京"), "fill_template.py"
    )
    assert "amount" in line and "client_name" in line and "date" in line
    assert not out.exists()

    proc = script("fill_template.py", template, "-o", out, "--set", "city=北京", "--allow-missing")
    assert proc.returncode == 0, proc.stderr
    assert "{{date}}" in proc.stderr
    assert "{{amount}}" in docx.Document(str(out)).tables[0].cell(0, 1).text


# -- extract-content -----------------------------------------------------------------------
def test_extract_content_finds_headings_tables_and_images(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "内容.json"
    images = tmp_path / "图片"
    proc = script("extract_content.py", sample, "-o", out, "--images-dir", images)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["headings"] == [
        {"level": 1, "text": "季度报告 Quarterly Report"},
        {"level": 2, "text": "要点 Highlights"},
        {"level": 2, "text": "销售数据"},
    ]
    assert data["tables"][0][0] == ["地区", "销售额", "增长"] and len(data["tables"][0]) == 4
    (image,) = data["images"]
    assert image["alt"] == "销售图表 Sales chart"
    saved = Path(image["path"])
    assert (
        saved.parent == images
        and saved.read_bytes() == (sample.parent / "images" / "chart.png").read_bytes()
    )
    kinds = {b["type"] for b in data["blocks"]}
    assert {"heading", "paragraph", "list_item", "table", "code", "image"} <= kinds
    nested = [b for b in data["blocks"] if b["type"] == "list_item" and b["text"] == "初稿"]
    assert nested == [{"type": "list_item", "level": 1, "ordered": True, "text": "初稿"}]
    assert SENTENCE in data["text"]

    markdown = script("extract_content.py", sample, "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert "# 季度报告 Quarterly Report" in markdown.stdout
    assert "| 华东 | 1,200 | 15% |" in markdown.stdout
    assert "   - 华东地区" in markdown.stdout


# -- ooxml-patch ---------------------------------------------------------------------------
def test_ooxml_patch_adds_comment_and_tracked_changes(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "审阅.docx"
    proc = script(
        "ooxml_patch.py", sample, "-o", out, "--author", "李雷", "--date", "2024-06-01T09:30:00Z",
        "--comment", "客户满意度明显提高", "请补充调查数据来源",
        "--replace", "百分之十二", "百分之十三",
        "--delete", "Revenue grew ",
        "--insert-after", "结论：继续保持", "，下季度复核",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    document = docx.Document(str(out))
    (comment,) = list(document.comments)
    assert comment.text == "请补充调查数据来源" and comment.author == "李雷"
    body = document.element.body
    starts = list(body.iter(qn("w:commentRangeStart")))
    assert len(starts) == 1 and len(list(body.iter(qn("w:commentReference")))) == 1
    deleted = ["".join(t.text for t in d.iter(qn("w:delText"))) for d in body.iter(qn("w:del"))]
    inserted = ["".join(t.text for t in i.iter(qn("w:t"))) for i in body.iter(qn("w:ins"))]
    assert deleted == ["百分之十二", "Revenue grew "]
    assert inserted == ["百分之十三", "，下季度复核"]
    for change in [*body.iter(qn("w:ins")), *body.iter(qn("w:del"))]:
        assert change.get(qn("w:author")) == "李雷"
        assert change.get(qn("w:date")) == "2024-06-01T09:30:00Z"
    # Why: the text between the comment markers is exactly the matched words.
    para = starts[0].getparent()
    inside, on = [], False
    for child in para:
        if child.tag == qn("w:commentRangeStart"):
            on = True
        elif child.tag == qn("w:commentRangeEnd"):
            on = False
        elif on:
            inside.append("".join(t.text for t in child.iter(qn("w:t"))))
    assert "".join(inside) == "客户满意度明显提高"


def test_libreoffice_reads_the_comment_and_tracked_changes(
    sample: Path, soffice: str, tmp_path: Path
) -> None:
    out = tmp_path / "reviewed.docx"
    proc = script(
        "ooxml_patch.py", sample, "-o", out, "--author", "李雷",
        "--comment", "成本下降", "核实", "--replace", "继续保持", "加大投入",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    convert = subprocess.run(
        [soffice, f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}", "--headless",
         "--norestore", "--convert-to", "odt", "--outdir", str(tmp_path / "odt"), str(out)],
        capture_output=True, timeout=300, start_new_session=True,
    )  # fmt: skip
    assert convert.returncode == 0, convert.stderr
    with zipfile.ZipFile(tmp_path / "odt" / "reviewed.odt") as odt:
        content = odt.read("content.xml").decode("utf-8")
    assert "<office:annotation" in content and "核实" in content
    assert "<text:insertion>" in content and "<text:deletion>" in content
    assert "加大投入" in content and "李雷" in content


def test_ooxml_patch_text_not_found_writes_nothing(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.docx"
    line = one_error_line(
        script("ooxml_patch.py", sample, "-o", out, "--delete", "不存在的文字"), "ooxml_patch.py"
    )
    assert "不存在的文字" in line
    assert not out.exists()


# -- convert-to-pdf ------------------------------------------------------------------------
def test_convert_to_pdf_keeps_the_chinese_text(sample_pdf: Path) -> None:
    from pypdf import PdfReader

    text = "".join(page.extract_text() for page in PdfReader(str(sample_pdf)).pages)
    assert SENTENCE in text
    assert "华东" in text and "def 合计(values):" in text


def test_md_to_docx_renders_to_a_picture(sample_pdf: Path, tmp_path: Path) -> None:
    pdftoppm = shutil.which("pdftoppm")
    if not pdftoppm:
        pytest.skip("pdftoppm is not installed (Debian: poppler-utils); .ci/run installs it")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    subprocess.run(
        [
            pdftoppm,
            "-png",
            "-r",
            "80",
            "-f",
            "1",
            "-l",
            "1",
            str(sample_pdf),
            str(artifacts / "md-to-docx"),
        ],
        check=True,
        timeout=120,
    )
    (png,) = artifacts.glob("md-to-docx*.png")
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
    from PIL import Image

    with Image.open(png) as image:
        assert image.width > 500 and image.height > 700
        # Why: a blank page has one colour; a rendered report has text, table and chart colours.
        assert len(image.convert("RGB").getcolors(1 << 20) or []) > 50
    print(f"artifact: {png}")


def test_convert_to_pdf_without_libreoffice_names_the_package(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.pdf"
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    line = one_error_line(
        script("convert_to_pdf.py", sample, "-o", out, env=env), "convert_to_pdf.py"
    )
    assert "libreoffice-writer" in line
    assert not out.exists()


# -- bad input: one line, exit 2, nothing written --------------------------------------------
@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("md_to_docx.py", []),
        ("fill_template.py", ["--set", "a=b"]),
        ("extract_content.py", []),
        ("ooxml_patch.py", ["--delete", "x"]),
        ("convert_to_pdf.py", []),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    name: str, extra: list[str], tmp_path: Path, sample: Path
) -> None:
    suffix = (
        ".pdf"
        if name == "convert_to_pdf.py"
        else ".json"
        if name == "extract_content.py"
        else ".docx"
    )
    out = tmp_path / f"out{suffix}"
    source = ".md" if name == "md_to_docx.py" else ".docx"

    one_error_line(script(name, tmp_path / f"missing{source}", "-o", out, *extra), name)
    # Why: LibreOffice would happily convert a text file, so only the python-docx readers.
    if name not in ("md_to_docx.py", "convert_to_pdf.py"):
        broken = tmp_path / "broken.docx"
        broken.write_text("not a zip", encoding="utf-8")
        assert "broken.docx" in one_error_line(script(name, broken, "-o", out, *extra), name)
    assert not out.exists()

    # An existing output is kept unless --force.
    out.write_bytes(b"keep")
    good = sample.with_suffix(".md") if name == "md_to_docx.py" else sample
    one_error_line(script(name, good, "-o", out, *extra), name)
    assert out.read_bytes() == b"keep"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

    # Unknown option: argparse's message, still one line and exit 2.
    one_error_line(script(name, good, "--no-such-option"), name)


def test_fill_template_bad_set_and_values(template: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.docx"
    assert "KEY=VALUE" in one_error_line(
        script("fill_template.py", template, "-o", out, "--set", "novalue"), "fill_template.py"
    )
    bad = tmp_path / "v.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    assert "object" in one_error_line(
        script("fill_template.py", template, "-o", out, "--values", bad), "fill_template.py"
    )
    assert not out.exists()


def test_md_to_docx_pt_sizes_are_sane(sample: Path) -> None:
    document = docx.Document(str(sample))
    assert document.styles["Heading 1"].font.size == Pt(18)
    assert document.styles["Heading 2"].font.size < document.styles["Heading 1"].font.size
