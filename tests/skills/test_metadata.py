""".skill-metadata.yaml parsing and strict prompt rendering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workhearth.errors import HearthError
from workhearth.skills.library import make_file_check
from workhearth.skills.metadata import parse_examples, render
from workhearth.skills.model import SkillError

META = """\
examples:
  - id: md-to-docx
    title: {zh: 把 Markdown 转成 Word, en: Markdown to Word}
    description: {zh: 生成一个 Word 文档, en: Make a Word document}
    prompt: "Turn {{input}} into {{ output }} in {{style}} style, {{copies}} copies. {{{{raw}}"
    variables:
      - name: input
        type: file
        required: true
        description: {zh: 输入文件, en: Input file}
      - {name: output, default: report.docx}
      - {name: style, type: choice, choices: [plain, fancy], default: plain}
      - {name: copies, type: number, default: 1}
"""


def example():
    examples, problems = parse_examples(META)
    assert problems == []
    return examples[0]


def test_an_example_parses_with_both_languages() -> None:
    ex = example()
    assert ex.id == "md-to-docx"
    assert ex.title == {"zh": "把 Markdown 转成 Word", "en": "Markdown to Word"}
    assert [v.name for v in ex.variables] == ["input", "output", "style", "copies"]
    data = ex.as_dict()
    assert set(data) == {"id", "title", "description", "variables"}
    assert data["variables"][0]["type"] == "file" and data["variables"][0]["required"] is True


def test_rendering_fills_values_and_defaults_and_keeps_literal_braces() -> None:
    text = render(example(), {"input": "in.md"}, lambda v: v)
    assert text == "Turn in.md into report.docx in plain style, 1 copies. {{raw}}"


def test_chinese_values_go_in_as_they_are() -> None:
    text = render(example(), {"input": "报告.md", "output": "季度报告.docx"}, lambda v: v)
    assert "Turn 报告.md into 季度报告.docx" in text


def test_values_are_never_expanded_again() -> None:
    text = render(example(), {"input": "a.md", "output": "{{style}} {{{{"}, lambda v: v)
    assert "into {{style}} {{{{ in plain" in text


def test_a_missing_required_variable_is_named() -> None:
    with pytest.raises(SkillError, match="missing required variable 'input'"):
        render(example(), {}, lambda v: v)
    with pytest.raises(SkillError, match="missing required variable 'input'"):
        render(example(), {"input": ""}, lambda v: v)


def test_an_unknown_variable_is_named() -> None:
    with pytest.raises(SkillError, match=r"unknown variable 'colour'.*input, output"):
        render(example(), {"input": "a", "colour": "red"}, lambda v: v)


def test_number_and_choice_values_are_checked() -> None:
    with pytest.raises(SkillError, match="'copies' must be a number"):
        render(example(), {"input": "a", "copies": "three"}, lambda v: v)
    with pytest.raises(SkillError, match="'style' must be one of plain, fancy"):
        render(example(), {"input": "a", "style": "bold"}, lambda v: v)
    assert "fancy style, 2.5 copies" in render(
        example(), {"input": "a", "style": "fancy", "copies": " 2.5"}, lambda v: v
    )


def test_a_file_variable_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    out.mkdir()
    (ws / "in.md").write_text("x")
    (out / "secret.md").write_text("x")
    os.symlink(out / "secret.md", ws / "link.md")
    check = make_file_check([ws])
    assert "Turn in.md into" in render(example(), {"input": "in.md"}, check)
    for value in (str(out / "secret.md"), "../elsewhere/secret.md", "link.md"):
        with pytest.raises(HearthError, match="outside the authorized workspace"):
            render(example(), {"input": value}, check)
    with pytest.raises(HearthError, match="does not exist"):
        render(example(), {"input": "missing.md"}, check)
    with pytest.raises(HearthError, match="no authorized workspace"):
        render(example(), {"input": "in.md"}, make_file_check([]))
    with pytest.raises(SkillError, match="needs an authorized workspace"):
        render(example(), {"input": "in.md"}, None)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("    prompt:", "    colour: red\n    prompt:"), ":5: unknown example field 'colour'"),
        (("type: file", "type: picture"), "type of 'input' must be one of"),
        (("type: choice, choices: [plain, fancy], ", "type: choice, "), "needs a list of choices"),
        (("default: plain", "default: bold"), "default 'style' must be one of"),
        (("default: 1}", "default: one}"), "default 'copies' must be a number"),
        (("{{style}} style", "{{colour}} style"), "undeclared variable 'colour'"),
        (("{{style}} style", "{{style style"), "starts no {{variable}}"),
        (("required: true", "required: maybe"), "required of 'input' must be true or false"),
        (("en: Markdown to Word", "fr: Markdown en Word"), "unknown language 'fr'"),
        (("- {name: output", "- {name: input"), "'input' is declared twice"),
    ],
)
def test_bad_metadata_names_file_and_line(change: tuple[str, str], message: str) -> None:
    assert META.count(change[0]) == 1
    examples, problems = parse_examples(META.replace(*change))
    assert examples == []
    assert any(message in p for p in problems), problems
    assert all(p.startswith(".skill-metadata.yaml:") for p in problems)


def test_duplicate_example_ids_and_unknown_top_level_keys() -> None:
    twice = META + META.split("\n", 1)[1]
    assert any("used twice" in p for p in parse_examples(twice)[1])
    assert parse_examples("version: 2\n" + META)[1] == [
        ".skill-metadata.yaml:1: unknown field 'version' (allowed: examples)"
    ]
    assert "not valid YAML" in parse_examples("examples: [\n")[1][0]
