"""Issue #17 holes 8 and 11 through the real ``hearth memory``: control characters are
refused in every field, a NUL written by hand hides nothing and loses no metadata, text
that starts with dashes is text, and ``-`` reads the text from standard input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth
from tests.e2e.test_cli_memory import files_digest, library, one_line_error, project_folder

# Why these: NUL hid a whole project; ESC and BEL drive terminals; U+0085 is a C1
# control (NEL) that some tools read as a line break; a lone CR overwrites a line on a terminal.
CONTROLS = {"escape": "\x1b[31m", "bell": "\x07", "c1-nel": "\x85", "carriage return": "\r"}
FIELDS = {
    "content": ["save", "harmless{c}looking"],
    "tag": ["save", "a fact", "--tag", "t{c}ag"],
    "snippet": ["save", "a fact", "--snippet", "pasted{c}here"],
    "session": ["save", "a fact", "--snippet", "s", "--session", "s{c}1"],
    "message": ["save", "a fact", "--snippet", "s", "--message", "m{c}1"],
    "edit": ["edit", "{id}", "now{c}changed"],
    "search": ["search", "llamas{c}"],
    "list tag": ["list", "--tag", "x{c}"],
}


def meta_of(hearth: Hearth) -> dict[str, dict]:
    return json.loads((project_folder(hearth) / "memory_meta.json").read_text())["entries"]


# Why pairs, not every combination: each field and each control is tried, in ~10 runs.
CASES = [(field, list(CONTROLS)[i % len(CONTROLS)]) for i, field in enumerate(FIELDS)]
CASES += [("content", c) for c in list(CONTROLS)[1:]]


@pytest.mark.parametrize(("field", "control"), CASES)
def test_control_characters_are_refused_in_every_field(
    hearth: Hearth, field: str, control: str
) -> None:
    entry_id = hearth.json("memory", "save", "llamas like hay")["id"]
    args = [a.replace("{id}", entry_id).replace("{c}", CONTROLS[control]) for a in FIELDS[field]]
    before = files_digest(hearth)
    line = one_line_error(hearth.run("memory", *args))
    assert "control character" in line, line
    assert CONTROLS[control] not in line  # never echoed raw to the terminal
    assert files_digest(hearth) == before


def test_a_nul_from_standard_input_is_refused_and_hides_nothing(hearth: Hearth) -> None:
    """The attack of hole 8: the NUL arrived through a save (here: ``save -`` from stdin)."""
    kept = hearth.json("memory", "save", "llamas like hay", "--level", "critical", "--tag", "farm")
    before = files_digest(hearth)
    line = one_line_error(hearth.run("memory", "save", "-", input="harmless\x00looking"))
    assert "control character U+0000" in line, line
    assert files_digest(hearth) == before
    listed = hearth.json("memory", "list")["entries"]
    assert [(e["id"], e["level"], e["tags"]) for e in listed] == [
        (kept["id"], "critical", ["farm"])
    ]


def test_a_nul_written_by_hand_hides_no_other_entry_and_keeps_all_metadata(
    hearth: Hearth,
) -> None:
    ids = [
        hearth.json("memory", "save", text, "--level", level, "--tag", tag, "--snippet", snip)["id"]
        for text, level, tag, snip in (
            ("llamas like hay", "critical", "farm", "said at lunch"),
            ("the harmless looking note", "low", "misc", "typed by hand"),
            ("alpacas are smaller than llamas", "normal", "zoo", "from the guide"),
        )
    ]
    meta_before = meta_of(hearth)
    path = project_folder(hearth) / "MEMORY.md"
    original = path.read_bytes()
    # An editor (or another program) puts a NUL into the middle entry's line.
    path.write_bytes(original.replace(b"harmless looking", b"harmless\x00looking"))

    listed = hearth.json("memory", "list")["entries"]
    assert {e["id"]: (e["level"], e["tags"]) for e in listed} == {
        ids[0]: ("critical", ["farm"]),
        ids[2]: ("normal", ["zoo"]),
    }
    found = hearth.json("memory", "search", "llamas")
    assert {h["entry_id"] for h in found} == {ids[0], ids[2]}
    assert all("\x00" not in h["text"] for h in found)
    assert meta_of(hearth) == meta_before  # the hidden entry's metadata is kept
    status = hearth.run("memory", "status")
    assert "MEMORY.md" in status.out and "NUL" in status.out, status.out
    # A plain index keeps it too; the hidden entry is still held by the file, so even
    # --prune keeps it (only metadata no file holds is an orphan).
    assert hearth.run("memory", "index").code == 0
    assert hearth.json("memory", "index", "--prune")["pruned"] == 0
    assert meta_of(hearth) == meta_before

    # Removing the NUL by hand brings the entry back with its level, tags and provenance.
    path.write_bytes(original)
    back = {e["id"]: e for e in hearth.json("memory", "list")["entries"]}
    assert set(back) == set(ids)
    assert back[ids[1]]["level"] == "low" and back[ids[1]]["tags"] == ["misc"]
    assert back[ids[1]]["provenance"][0]["snippet"] == "typed by hand"


def test_the_hidden_entry_can_still_be_edited_back_into_sight(hearth: Hearth) -> None:
    entry = hearth.json("memory", "save", "harmless looking", "--tag", "keep")
    path = project_folder(hearth) / "MEMORY.md"
    path.write_bytes(path.read_bytes().replace(b"harmless looking", b"harmless\x00looking"))
    assert hearth.json("memory", "list")["entries"] == []
    edited = hearth.json("memory", "edit", entry["id"], "harmless looking, mended")
    assert edited["tags"] == ["keep"]
    assert [e["content"] for e in hearth.json("memory", "list")["entries"]] == [
        "harmless looking, mended"
    ]


def test_prune_drops_orphans_only_when_asked(hearth: Hearth) -> None:
    """Metadata of entries the index cannot see (a file that turned unreadable as text)
    is kept by every index; ``hearth memory index --prune`` drops it when asked."""
    hearth.json("memory", "save", "llamas like hay", "--tag", "farm")
    folder = project_folder(hearth)
    notes = folder / "notes.md"
    gone = library(hearth).memory.save("a note in its own file", tags=["n"], file="notes.md")
    # The note file is rewritten as UTF-16 without a BOM: binary to hearth.
    notes.write_bytes(notes.read_text().encode("utf-16-le"))
    assert hearth.run("memory", "index").code == 0
    assert hearth.json("memory", "list")["entries"][0]["content"] == "llamas like hay"
    assert gone.id in meta_of(hearth)  # kept: the index cannot see that file
    human = hearth.run("memory", "index", "--prune")
    assert human.code == 0 and "pruned 1 " in human.out, human.out
    assert gone.id not in meta_of(hearth)
    assert len(meta_of(hearth)) == 1
    assert hearth.json("memory", "index", "--prune")["pruned"] == 0


# --------------------------------------------------------- dashes and standard input
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEAVNbWkPVu8114AQe92yNKdncV39DiEaj+O7wLTy0/CuhSr834TV8T8HgmZWok\n"
    "-----END RSA PRIVATE KEY-----"
)


def test_text_starting_with_dashes_is_text_and_a_key_is_refused_as_a_secret(
    hearth: Hearth,
) -> None:
    line = one_line_error(hearth.run("memory", "save", PEM))
    assert line.startswith("hearth: refused") and "private key" in line, line
    assert "No such option" not in line
    saved = hearth.json("memory", "save", "--- a rule, then a fact ---")
    assert saved["content"] == "--- a rule, then a fact ---"
    plain = hearth.json("memory", "save", "-v is the verbose flag", "--tag", "cli")
    assert plain["content"] == "-v is the verbose flag" and plain["tags"] == ["cli"]
    # an option's value may start with dashes too, and stays that option's value
    noted = hearth.json("memory", "save", "--- rule ---", "--snippet", "- a bullet, pasted")
    assert noted["content"] == "--- rule ---"
    assert noted["provenance"][0]["snippet"] == "- a bullet, pasted"
    # an unknown option that is not text keeps its usual error
    assert "No such option" in hearth.run("memory", "save", "x", "--levle", "low").err


def test_dash_reads_the_text_from_standard_input(hearth: Hearth) -> None:
    saved = hearth.json("memory", "save", "-", "--tag", "stdin", input="美洲驼喜欢干草\n")
    assert saved["content"] == "美洲驼喜欢干草" and saved["tags"] == ["stdin"]
    line = one_line_error(hearth.run("memory", "save", "-", input=PEM + "\n"))
    assert line.startswith("hearth: refused") and "private key" in line
    multi = hearth.json("memory", "save", "-", input="first line\nsecond line\n")
    assert multi["content"] == "first line\nsecond line"
    edited = hearth.json("memory", "edit", saved["id"], "-", input="羊驼更小\n")
    assert edited["content"] == "羊驼更小"
    assert "empty" in one_line_error(hearth.run("memory", "save", "-", input=""))


def test_undecodable_standard_input_is_one_clear_line(hearth: Hearth, tmp_path: Path) -> None:
    import subprocess

    from tests.e2e.conftest import HEARTH_CMD

    proc = subprocess.run(
        [*HEARTH_CMD, "memory", "save", "-"],
        cwd=hearth.workspace,
        env=hearth.env,
        input=b"caf\xe9 \xff\xfe",
        capture_output=True,
        timeout=60,
    )
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "UTF-8" in err, err


def test_a_nul_inside_a_multi_line_entry_hides_only_that_entry(hearth: Hearth) -> None:
    first = hearth.json("memory", "save", "-", "--tag", "a", input="llamas eat hay\nevery day\n")
    second = hearth.json("memory", "save", "-", "--tag", "b", input="alpacas hum\nat dusk\n")
    third = hearth.json("memory", "save", "llamas spit", "--tag", "c")
    path = project_folder(hearth) / "MEMORY.md"
    path.write_bytes(path.read_bytes().replace(b"alpacas hum", b"alpacas\x00hum"))
    listed = {e["id"]: e for e in hearth.json("memory", "list")["entries"]}
    assert set(listed) == {first["id"], third["id"]}
    assert listed[first["id"]]["content"] == "llamas eat hay\nevery day"
    assert listed[first["id"]]["tags"] == ["a"]
    assert second["id"] in meta_of(hearth)
    assert {h["entry_id"] for h in hearth.json("memory", "search", "dusk")} == set()


def test_a_stray_invalid_byte_hides_only_its_entry_in_chinese_memory(hearth: Hearth) -> None:
    """Not only NUL: one byte that is not UTF-8 made a Chinese MEMORY.md read as
    Windows-1252 (every entry mojibake) or binary. Its line is skipped; the rest is found."""
    ids = [
        hearth.json("memory", "save", text, "--tag", tag)["id"]
        for text, tag in (
            ("会话记忆保存在文件里", "a"),
            ("崩溃后可以恢复", "b"),
            ("索引可以重建", "c"),
        )
    ]
    path = project_folder(hearth) / "MEMORY.md"
    original = path.read_bytes()
    path.write_bytes(original.replace("崩溃后".encode(), b"\xff\xfe" + "崩溃后".encode()))
    listed = {e["id"]: e["tags"] for e in hearth.json("memory", "list")["entries"]}
    assert listed == {ids[0]: ["a"], ids[2]: ["c"]}
    assert [h["entry_id"] for h in hearth.json("memory", "search", "记忆")] == [ids[0]]
    assert ids[1] in meta_of(hearth)
    context = hearth.json("memory", "context")["context"]
    assert "会话记忆" in context and "\ufffd" not in context and "å" not in context
    path.write_bytes(original)
    assert len(hearth.json("memory", "list")["entries"]) == 3
