"""docx extract_content.py on a reviewed document: tracked changes and comments (issue 21, 2).

The reviewed file is made the way a user makes it (ooxml_patch.py on a python-docx file);
what extract_content.py reads is compared with python-docx's own reading of the same file
once its changes are accepted or rejected by hand in the XML.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import docx
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script

SCRIPTS = BUILTIN / "docx" / "scripts"
DATE = "2026-12-01T10:00:00Z"


def script(name: str, *args: object) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / name, *args)


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quote with a table, reviewed: 12,000 → 13,000, （已复核） added, one comment."""
    folder = tmp_path_factory.mktemp("docx-review")
    document = docx.Document()
    document.add_heading("报价单", 1)
    document.add_paragraph("第一行")
    document.add_paragraph("第二行")
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {
        (0, 0): "项目",
        (0, 1): "金额",
        (1, 0): "服务费",
        (1, 1): "¥12,000",
    }.items():
        table.cell(r, c).text = text
    document.save(str(folder / "quote.docx"))
    proc = script(
        "ooxml_patch.py", folder / "quote.docx", "-o", folder / "审阅.docx",
        "--author", "李雷", "--date", DATE,
        "--replace", "12,000", "13,000", "--insert-after", "第二行", "（已复核）",
        "--comment", "第一行", "请核对数量",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return folder / "审阅.docx"


def settled(path: Path, view: str, out: Path) -> docx.document.Document:
    """The file with every change accepted or rejected in its XML, opened by python-docx."""
    document = docx.Document(str(path))
    body = document.element.body
    gone, kept = ("w:del", "w:ins") if view == "accept" else ("w:ins", "w:del")
    for el in list(body.iter(qn(gone))):
        el.getparent().remove(el)
    for el in list(body.iter(qn(kept))):
        for t in el.iter(qn("w:delText")):
            t.tag = qn("w:t")
        for child in list(el):
            el.addprevious(child)
        el.getparent().remove(el)
    document.save(str(out))
    return docx.Document(str(out))


def extract(path: Path, *args: str) -> dict:
    proc = script("extract_content.py", path, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("view", "cell", "line"), [
    ("accept", "¥13,000", "第二行（已复核）"),
    ("reject", "¥12,000", "第二行"),
])  # fmt: skip
def test_extract_reads_tracked_changes_accepted_or_rejected(
    reviewed: Path, tmp_path: Path, view: str, cell: str, line: str
) -> None:
    data = extract(reviewed) if view == "accept" else extract(reviewed, "--changes", view)
    assert data["tables"][0][1] == ["服务费", cell]
    paragraphs = [b["text"] for b in data["blocks"] if b["type"] == "paragraph"]
    assert paragraphs == ["第一行", line]
    # Why: python-docx reading the same file with the changes settled by hand agrees.
    user = settled(reviewed, view, tmp_path / "settled.docx")
    assert data["tables"][0] == [[c.text for c in row.cells] for row in user.tables[0].rows]
    assert paragraphs == [
        p.text for p in user.paragraphs if p.text and not p.style.name.startswith("Heading")
    ]


def test_extract_lists_the_changes_and_comments(reviewed: Path, tmp_path: Path) -> None:
    data = extract(reviewed)
    assert [(c["kind"], c["text"], c["author"], c["date"]) for c in data["changes"]] == [
        ("insert", "（已复核）", "李雷", DATE),
        ("delete", "12,000", "李雷", DATE),
        ("insert", "13,000", "李雷", DATE),
    ]
    ((comment),) = data["comments"]
    assert (comment["author"], comment["text"], comment["anchor"]) == (
        "李雷",
        "请核对数量",
        "第一行",
    )

    markdown = script("extract_content.py", reviewed, "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert "| 服务费 | ¥13,000 |" in markdown.stdout and "第二行（已复核）" in markdown.stdout
    assert "- delete by 李雷 2026-12-01T10:00:00Z: '12,000'" in markdown.stdout
    assert "- 李雷 on '第一行': 请核对数量" in markdown.stdout

    out = tmp_path / "审阅.md"
    proc = script("extract_content.py", reviewed, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "3 tracked changes, 1 comments" in proc.stdout
    assert "## Tracked changes (text above: accepted)" in out.read_text(encoding="utf-8")


def _wrap(run: object, tag: str, rev_id: int) -> None:
    wrapper = OxmlElement(tag)
    for key, value in (("w:id", str(rev_id)), ("w:author", "韩梅梅"), ("w:date", DATE)):
        wrapper.set(qn(key), value)
    run.addprevious(wrapper)  # type: ignore[attr-defined]
    wrapper.append(run)


def test_extract_reads_moves_and_deleted_rows(tmp_path: Path) -> None:
    document = docx.Document()
    moved = document.add_paragraph().add_run("先做这个。")._r
    document.add_paragraph("中间。")
    target = document.add_paragraph().add_run("先做这个。")._r
    for t in moved.iter(qn("w:t")):
        t.tag = qn("w:delText")
    _wrap(moved, "w:moveFrom", 1)
    _wrap(target, "w:moveTo", 2)
    table = document.add_table(rows=2, cols=1)
    table.cell(0, 0).text = "保留"
    table.cell(1, 0).text = "删除的行"
    tr_pr = table.rows[1]._tr.get_or_add_trPr()
    row_del = OxmlElement("w:del")
    for key, value in (("w:id", "3"), ("w:author", "韩梅梅"), ("w:date", DATE)):
        row_del.set(qn(key), value)
    tr_pr.append(row_del)
    run = table.cell(1, 0).paragraphs[0].runs[0]._r
    for t in run.iter(qn("w:t")):
        t.tag = qn("w:delText")
    _wrap(run, "w:del", 4)
    document.save(str(tmp_path / "moved.docx"))

    accepted = extract(tmp_path / "moved.docx")
    assert accepted["text"].split("\n") == ["中间。", "先做这个。", "保留"]
    rejected = extract(tmp_path / "moved.docx", "--changes", "reject")
    assert rejected["text"].split("\n") == ["先做这个。", "中间。", "保留", "删除的行"]
    kinds = [(c["kind"], c["of"], c["moved"], c["text"]) for c in accepted["changes"]]
    assert kinds == [
        ("delete", "text", True, "先做这个。"),
        ("insert", "text", True, "先做这个。"),
        ("delete", "row", False, "删除的行"),
        ("delete", "text", False, "删除的行"),
    ]


def test_extract_bad_changes_value_is_one_line(reviewed: Path) -> None:
    line = one_error_line(
        script("extract_content.py", reviewed, "--changes", "maybe"), "extract_content.py"
    )
    assert "--changes" in line
