"""The built-in pdf skill: every script runs on real files and its output opens with pypdf."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
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

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script

SKILL = BUILTIN / "pdf"
SCRIPTS = SKILL / "scripts"
SENTENCE = "这是一个中文句子，用来检查文字是否可以提取。"

MARKDOWN = f"""# 季度报告

{SENTENCE} Mixed **粗体 bold** and `code`.

## 列表

- 第一项
- 第二项
  1. 子项一

| 城市 | 人口 |
| --- | --- |
| 北京 | 2189 |
| 上海 | 2487 |

```
print("你好")
```
"""


def script(name: str, *args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / name, *args, timeout=180, cwd=cwd)


@pytest.fixture
def report_pdf(tmp_path: Path) -> Path:
    """A Chinese Markdown report rendered by md_to_pdf.py."""
    source = tmp_path / "报告.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    result = script("md_to_pdf.py", source, "-o", tmp_path / "报告.pdf")
    assert result.returncode == 0, result.stderr
    return tmp_path / "报告.pdf"


def numbered_pdf(path: Path, pages: int) -> Path:
    """A PDF whose page i says 'page i', made with md_to_pdf.py and pypdf."""
    writer = PdfWriter()
    for i in range(1, pages + 1):
        one = path.with_name(f"{path.stem}-{i}.md")
        one.write_text(f"page {i}", encoding="utf-8")
        # Why: --cid-fallback on ASCII text uses a core font: no CJK subsetting, fast.
        made = script("md_to_pdf.py", one, "-o", one.with_suffix(".pdf"), "--cid-fallback")
        assert made.returncode == 0, made.stderr
        writer.append(str(one.with_suffix(".pdf")))
    writer.write(path)
    return path


def page_texts(path: Path) -> list[str]:
    return [p.extract_text() for p in PdfReader(path).pages]


def form_pdf(path: Path) -> Path:
    """A one-page AcroForm with a text field, a Chinese-named text field and a checkbox."""
    writer = PdfWriter()
    page = writer.add_blank_page(595, 842)
    annots = ArrayObject()
    fields = ArrayObject()

    def widget(name: str, rect: list[float], extra: dict) -> None:
        field = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Annot"),
                NameObject("/Subtype"): NameObject("/Widget"),
                NameObject("/T"): TextStringObject(name),
                NameObject("/Rect"): ArrayObject(FloatObject(v) for v in rect),
                NameObject("/F"): NumberObject(4),
                NameObject("/P"): page.indirect_reference,
                **{NameObject(k): v for k, v in extra.items()},
            }
        )
        ref = writer._add_object(field)
        annots.append(ref)
        fields.append(ref)

    text = {"/FT": NameObject("/Tx"), "/DA": TextStringObject("/Helv 12 Tf 0 g")}
    widget("name", [72, 700, 300, 720], text)
    widget("城市", [72, 660, 300, 680], text)
    on = DictionaryObject({NameObject("/Yes"): writer._add_object(DictionaryObject())})
    on[NameObject("/Off")] = writer._add_object(DictionaryObject())
    widget(
        "agree",
        [72, 620, 90, 638],
        {
            "/FT": NameObject("/Btn"),
            "/V": NameObject("/Off"),
            "/AS": NameObject("/Off"),
            "/AP": DictionaryObject({NameObject("/N"): on}),
        },
    )
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


def png_variance(path: Path) -> float:
    """Variance of the grey levels of an 8-bit PNG (Pillow comes with python-pptx)."""
    from PIL import Image

    with Image.open(path) as image:
        grey = image.convert("L").tobytes()
    mean = sum(grey) / len(grey)
    return sum((g - mean) ** 2 for g in grey) / len(grey)


# ------------------------------------------------------------------ md-to-pdf


def test_md_to_pdf_chinese_is_extractable_and_visible(report_pdf: Path, tmp_path: Path) -> None:
    reader = PdfReader(report_pdf)
    text = reader.pages[0].extract_text()
    assert SENTENCE in text
    assert "季度报告" in text and "第一项" in text and "上海" in text
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    subprocess.run(
        [
            "pdftoppm",
            "-png",
            "-r",
            "60",
            "-f",
            "1",
            "-l",
            "1",
            str(report_pdf),
            str(artifacts / "md-to-pdf"),
        ],
        check=True,
        timeout=120,
    )
    (png,) = artifacts.glob("md-to-pdf*.png")
    assert png_variance(png) > 100, f"page 1 looks blank: {png}"
    print(f"artifact: {png}")


def test_md_to_pdf_embeds_the_cjk_font(report_pdf: Path) -> None:
    fonts = PdfReader(report_pdf).pages[0]["/Resources"]["/Font"]
    cid_fonts = [f.get_object()["/DescendantFonts"][0].get_object() for f in fonts.values()]
    descriptors = [f["/FontDescriptor"] for f in cid_fonts]
    assert any("/FontFile2" in d or "/FontFile3" in d for d in descriptors)
    assert all(f.get_object()["/Encoding"] == "/Identity-H" for f in fonts.values())


def test_md_to_pdf_cid_fallback_keeps_chinese_extractable(tmp_path: Path) -> None:
    source = tmp_path / "a.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    result = script("md_to_pdf.py", source, "-o", tmp_path / "a.pdf", "--cid-fallback")
    assert result.returncode == 0, result.stderr
    assert SENTENCE in PdfReader(tmp_path / "a.pdf").pages[0].extract_text()


def test_md_to_pdf_bad_input(tmp_path: Path) -> None:
    one_error_line(script("md_to_pdf.py", tmp_path / "missing.md"), "md_to_pdf.py")
    source = tmp_path / "a.md"
    source.write_text("# hi", encoding="utf-8")
    bad_font = tmp_path / "font.txt"
    bad_font.write_text("x")
    one_error_line(script("md_to_pdf.py", source, "--font", bad_font), "md_to_pdf.py")
    (tmp_path / "a.pdf").write_bytes(b"keep")
    one_error_line(script("md_to_pdf.py", source), "md_to_pdf.py")
    assert (tmp_path / "a.pdf").read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "a.pdf", "font.txt"]


# ------------------------------------------------------------------ extract


def test_extract_finds_text_and_table_cells(report_pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = script("extract.py", report_pdf, "-o", out)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["page_count"] == 1
    page = data["pages"][0]
    assert SENTENCE in page["text"]
    assert [["城市", "人口"], ["北京", "2189"], ["上海", "2487"]] in page["tables"]
    md = script("extract.py", report_pdf, "--format", "md")
    assert md.returncode == 0 and "| 北京 | 2189 |" in md.stdout


def test_extract_bad_input(tmp_path: Path) -> None:
    not_pdf = tmp_path / "x.pdf"
    not_pdf.write_text("hello")
    one_error_line(script("extract.py", not_pdf), "extract.py")
    one_error_line(
        script("extract.py", tmp_path / "none.pdf", "-o", tmp_path / "o.json"), "extract.py"
    )
    assert not (tmp_path / "o.json").exists()


# ------------------------------------------------------------------ merge and split


def test_merge_with_page_ranges(tmp_path: Path) -> None:
    a = numbered_pdf(tmp_path / "a.pdf", 4)
    b = numbered_pdf(tmp_path / "乙.pdf", 2)
    out = tmp_path / "merged.pdf"
    result = script("merge.py", f"{a}:1-2,4", b, f"{b}:1", "-o", out)
    assert result.returncode == 0, result.stderr
    texts = page_texts(out)
    assert [t.strip() for t in texts] == [
        "page 1",
        "page 2",
        "page 4",
        "page 1",
        "page 2",
        "page 1",
    ]


def test_merge_bad_input_writes_nothing(tmp_path: Path) -> None:
    a = numbered_pdf(tmp_path / "a.pdf", 2)
    out = tmp_path / "merged.pdf"
    one_error_line(script("merge.py", a, f"{a}:3", "-o", out), "merge.py")
    one_error_line(script("merge.py", a, tmp_path / "none.pdf", "-o", out), "merge.py")
    one_error_line(script("merge.py", a, "-o", a), "merge.py")
    assert not out.exists()


def test_split_per_page_and_per_range(tmp_path: Path) -> None:
    source = numbered_pdf(tmp_path / "doc.pdf", 3)
    parts = tmp_path / "parts"
    parts.mkdir()
    assert script("split.py", source, "-o", parts).returncode == 0
    names = sorted(p.name for p in parts.iterdir())
    assert names == ["doc-p1.pdf", "doc-p2.pdf", "doc-p3.pdf"]
    assert page_texts(parts / "doc-p2.pdf")[0].strip() == "page 2"
    ranges = tmp_path / "ranges"
    ranges.mkdir()
    assert script("split.py", source, "-o", ranges, "--ranges", "1-2,3").returncode == 0
    assert [t.strip() for t in page_texts(ranges / "doc-p1-2.pdf")] == ["page 1", "page 2"]
    assert len(PdfReader(ranges / "doc-p3.pdf").pages) == 1


def test_split_bad_input_writes_nothing(tmp_path: Path) -> None:
    source = numbered_pdf(tmp_path / "doc.pdf", 2)
    out = tmp_path / "out"
    out.mkdir()
    one_error_line(script("split.py", source, "-o", out, "--ranges", "1,5"), "split.py")
    one_error_line(script("split.py", source, "-o", out, "--ranges", "x"), "split.py")
    (out / "doc-p2.pdf").write_bytes(b"keep")
    one_error_line(script("split.py", source, "-o", out), "split.py")
    assert sorted(p.name for p in out.iterdir()) == ["doc-p2.pdf"]


# ------------------------------------------------------------------ fill-form


def test_fill_form_lists_and_fills_fields(tmp_path: Path) -> None:
    form = form_pdf(tmp_path / "form.pdf")
    listed = script("fill_form.py", form, "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    fields = {f["name"]: f for f in json.loads(listed.stdout)}
    assert fields["name"]["type"] == "text" and fields["agree"]["type"] == "checkbox"
    assert fields["agree"]["choices"] == ["Yes"]

    data = tmp_path / "values.json"
    data.write_text(json.dumps({"城市": "北京", "name": "overridden"}), encoding="utf-8")
    out = tmp_path / "filled.pdf"
    result = script(
        "fill_form.py", form, "-o", out, "--data", data, "--set", "name=张三", "--set", "agree=yes"
    )
    assert result.returncode == 0, result.stderr
    reader = PdfReader(out)
    values = reader.get_fields()
    assert values["name"]["/V"] == "张三"
    assert values["城市"]["/V"] == "北京"
    assert values["agree"]["/V"] == "/Yes"
    # Why: the values are drawn in an embedded font (test_pdf_forms.py checks the drawing).
    widgets = [ref.get_object() for ref in reader.pages[0]["/Annots"]]
    assert all("/AP" in w for w in widgets)


def test_fill_form_bad_input_writes_nothing(tmp_path: Path) -> None:
    form = form_pdf(tmp_path / "form.pdf")
    out = tmp_path / "filled.pdf"
    one_error_line(script("fill_form.py", form, "-o", out, "--set", "nope=1"), "fill_form.py")
    one_error_line(script("fill_form.py", form, "-o", out, "--set", "agree=maybe"), "fill_form.py")
    one_error_line(script("fill_form.py", form, "-o", out, "--set", "novalue"), "fill_form.py")
    bad_json = tmp_path / "v.json"
    bad_json.write_text("{not json")
    one_error_line(script("fill_form.py", form, "-o", out, "--data", bad_json), "fill_form.py")
    assert not out.exists()


# ------------------------------------------------------------------ skill files


def test_every_example_has_a_script_and_the_metadata_shape() -> None:
    meta = yaml.safe_load((SKILL / ".skill-metadata.yaml").read_text(encoding="utf-8"))
    ids = {e["id"] for e in meta["examples"]}
    assert ids == {"extract", "merge", "split", "fill-form", "md-to-pdf"}
    body = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    for example in meta["examples"]:
        assert set(example["title"]) == {"zh", "en"} and set(example["description"]) == {"zh", "en"}
        for var in example["variables"]:
            assert "{{" + var["name"] + "}}" in example["prompt"]
        script_name = example["id"].replace("-", "_") + ".py"
        assert (SCRIPTS / script_name).is_file()
        assert f"scripts/{script_name}" in body
    for name in ("extract.py", "merge.py", "split.py", "fill_form.py", "md_to_pdf.py"):
        result = script(name, "--help")
        assert result.returncode == 0 and "usage:" in result.stdout
