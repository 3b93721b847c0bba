"""SKILL.md validation per the Agent Skills spec: a good and a bad file for each rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.skills.validate import parse_skill_text, read_skill, validate

GOOD = "---\nname: demo\ndescription: Does a demo.\n---\n# Body\n"


def problems(front: str, folder: str = "demo") -> list[str]:
    return parse_skill_text(f"---\n{front}---\nbody\n", folder).problems


def test_a_minimal_skill_is_valid_and_keeps_its_body() -> None:
    parsed = parse_skill_text(GOOD, "demo")
    assert parsed.problems == []
    assert parsed.name == "demo" and parsed.description == "Does a demo."
    assert parsed.body == "# Body\n"


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        # name: 1-64 of a-z 0-9 '-', no leading/trailing/double '-'
        ("name: demo\n", "name: Demo\n", "may hold only a-z"),
        ("name: demo\n", "name: -demo\n", "may not start or end"),
        ("name: demo\n", "name: demo-\n", "may not start or end"),
        ("name: de-mo\n", "name: de--mo\n", "hold '--'"),
        ("name: demo\n", "name: dé-mo\n", "may hold only a-z"),
        ("name: demo\n", "name: 12\n", "name must be text"),
        ("name: demo\n", "", "missing required field 'name'"),
    ],
)
def test_name_rules(good: str, bad: str, message: str) -> None:
    folder = good.split(":")[1].strip()
    rest = "description: Does a demo.\n"
    assert problems(good + rest, folder) == []
    found = problems(bad + rest, folder)
    assert any(message in p for p in found), found
    assert all(p.startswith("SKILL.md:") for p in found)


def test_name_length_is_1_to_64() -> None:
    ok = "a" * 64
    assert problems(f"name: {ok}\ndescription: d\n", ok) == []
    long = "a" * 65
    assert any("1-64 characters" in p for p in problems(f"name: {long}\ndescription: d\n", long))
    assert any("1-64" in p for p in problems("name: ''\ndescription: d\n", ""))


def test_name_must_equal_the_folder_name() -> None:
    assert problems("name: demo\ndescription: d\n", "demo") == []
    found = problems("name: demo\ndescription: d\n", "other")
    assert found == ["SKILL.md:2: name 'demo' differs from its folder name 'other'"]


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        ("description: Does it.\n", "", "missing required field 'description'"),
        ("description: Does it.\n", "description: ''\n", "non-empty text"),
        ("description: 把文件转成 Word。\n", "description: [a, b]\n", "non-empty text"),
        (f"description: {'x' * 1024}\n", f"description: {'x' * 1025}\n", "1025 characters"),
    ],
)
def test_description_rules(good: str, bad: str, message: str) -> None:
    assert problems("name: demo\n" + good) == []
    found = problems("name: demo\n" + bad)
    assert any(message in p for p in found), found


def test_an_unknown_field_is_an_error_naming_file_and_line() -> None:
    found = problems("name: demo\ndescription: d\nmodel: opus\n")
    assert found == [
        "SKILL.md:4: unknown field 'model' (allowed: name, description, license, "
        "compatibility, metadata, allowed-tools)"
    ]


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        ("license: MIT\n", "license: 3\n", "license must be non-empty text"),
        ("compatibility: Python 3.11+\n", f"compatibility: {'c' * 501}\n", "501 characters"),
        ("metadata:\n  author: ana\n", "metadata:\n  version: 1.0\n", "text values"),
        ("metadata: {}\n", "metadata: just-text\n", "mapping"),
        ("allowed-tools: read_file shell\n", "allowed-tools: 3\n", "space-separated"),
        ("allowed-tools: [read_file, shell]\n", "allowed-tools: [read_file, 3]\n", "space-sep"),
    ],
)
def test_optional_fields(good: str, bad: str, message: str) -> None:
    base = "name: demo\ndescription: d\n"
    assert problems(base + good) == []
    found = problems(base + bad)
    assert len(found) == 1 and message in found[0], found
    assert found[0].startswith("SKILL.md:4:")


def test_allowed_tools_string_and_list_read_the_same() -> None:
    a = parse_skill_text(
        "---\nname: d\ndescription: d\nallowed-tools: read_file  shell\n---\n", "d"
    )
    b = parse_skill_text(
        "---\nname: d\ndescription: d\nallowed-tools: [read_file, shell]\n---\n", "d"
    )
    assert a.allowed_tools == b.allowed_tools == ("read_file", "shell")
    assert parse_skill_text(GOOD, "demo").allowed_tools is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no frontmatter\n", "SKILL.md:1: no YAML frontmatter"),
        ("---\nname: demo\ndescription: d\n", "SKILL.md:1: no YAML frontmatter"),
        ("---\nname: demo\ndescription: [unclosed\n---\n", "SKILL.md:4: not valid YAML"),
        ("---\n- a list\n---\n", "must be a YAML mapping"),
        ("---\nname: demo\nname: demo\ndescription: d\n---\n", "duplicate key 'name'"),
        ("---\nname: !!python/object:os.system demo\ndescription: d\n---\n", "not valid YAML"),
    ],
)
def test_broken_frontmatter(text: str, message: str) -> None:
    assert parse_skill_text(GOOD, "demo").problems == []
    found = parse_skill_text(text, "demo").problems
    assert any(message in p for p in found), found


def test_unreadable_files_are_problems_not_exceptions(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    assert read_skill(folder).problems == ["SKILL.md: missing"]
    (folder / "SKILL.md").write_bytes(b"---\nname: demo\ndescription: \xff\n---\n")
    assert "not UTF-8" in read_skill(folder).problems[0]
    (folder / "SKILL.md").write_text(GOOD, encoding="utf-8")
    assert validate(folder) == []
    (folder / ".skill-metadata.yaml").write_text("examples: 3\n", encoding="utf-8")
    assert validate(folder) == [".skill-metadata.yaml:1: examples must be a list"]


def test_only_what_leaves_nothing_usable_is_an_error(tmp_path: Path) -> None:
    # Issue #18 item 9: deviations are listed (strict), but only these break the skill.
    lenient = parse_skill_text(
        "---\nname: Changelog Writer\ndescription: d\nversion: 1.0.0\n"
        "metadata:\n  version: 1.0\nlicense: 3\n---\nbody\n",
        "changelog",
    )
    assert lenient.errors == [] and len(lenient.problems) == 5, lenient.problems
    assert lenient.name == "Changelog Writer" and lenient.body == "body\n"
    for text, message in [
        ("---\nname: demo\n---\n", "missing required field 'description'"),
        ("---\nname: demo\ndescription: ' '\n---\n", "description must be non-empty"),
        ("---\nname: demo\ndescription: d\nallowed-tools: 3\n---\n", "allowed-tools must"),
        ("# no frontmatter\n", "no YAML frontmatter"),
        ("---\ndescription: [unclosed\n---\n", "not valid YAML"),
    ]:
        parsed = parse_skill_text(text, "demo")
        assert len(parsed.errors) == 1 and message in parsed.errors[0], parsed.problems
        assert set(parsed.errors) <= set(parsed.problems)
    folder = tmp_path / "demo"
    folder.mkdir()
    assert read_skill(folder).errors == ["SKILL.md: missing"]
    (folder / "SKILL.md").write_text("---\nname: Demo\ndescription: d\nversion: 2\n---\n")
    assert read_skill(folder).errors == []
    assert len(validate(folder)) == 3  # strict: names every deviation


def test_allowed_tools_keep_patterns_whole() -> None:
    parsed = parse_skill_text(
        "---\nname: d\ndescription: d\nallowed-tools: Read, Bash(git add:*) Bash(python:*)\n---\n",
        "d",
    )
    assert parsed.allowed_tools == ("Read", "Bash(git add:*)", "Bash(python:*)")
