"""The page file format: what hearth writes reads back the same, whatever the paths hold,
and a hand edit (or a page without front matter) shows as edited."""

from __future__ import annotations

from workhearth.wiki.pages import parse, render, sha256_text

ODD = ['docs/a "quoted": name.md', "报告/第一季度.docx", "x/#hash [1], {2}.md", "- dash.md"]


def test_a_page_reads_back_as_written_whatever_its_paths_hold() -> None:
    body = "# t\n\ntext\n"
    text = render(
        title='odd: "title" #1',
        model="openai:qwen-plus",
        sources=[(p, "0" * 63 + "1") for p in ODD],
        unreadable=[(ODD[1], 'damaged: "zip" error')],
        body=body,
        links=["a", "b-c"],
        written="2026-12-02T09:30:00Z",
    )
    page = parse("odd", text)
    assert page.body == body and not page.edited
    assert page.meta["title"] == 'odd: "title" #1'
    assert page.info(update_waiting=False, stale=False).written == "2026-12-02T09:30:00Z"
    assert [s["path"] for s in page.meta["sources"]] == ODD
    assert page.meta["unreadable"] == [{"path": ODD[1], "reason": 'damaged: "zip" error'}]
    assert page.links == ["a", "b-c"]
    assert page.meta["body_sha256"] == sha256_text(body)


def test_an_edit_of_the_body_shows_and_keeps_the_version() -> None:
    text = render(title="t", model="m", sources=[], unreadable=[], body="# t\n")
    page = parse("t", text)
    edited = parse("t", text + "my line\n")
    assert edited.edited and not page.edited
    assert edited.version == page.version  # the overview is not rewritten for a hand edit


def test_a_file_without_front_matter_is_all_body_and_counts_as_edited() -> None:
    for text in ("# my own notes\n", "---\nnot: [closed\n", "---\n---\nbody\n"):
        page = parse("notes", text)
        assert page.meta == {} and page.body == text and page.edited
