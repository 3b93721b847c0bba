"""The real ``hearth`` in an 80-column terminal: the useful column keeps the width (#19 item 7).

Every listing is one plain table (a header row, no box); at ``COLUMNS=80`` the free text
(memory content, session title, trashed file name, audit summary) gets most of the line,
ids shorten to a prefix the commands still take, and help summaries wrap instead of being cut.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import Hearth, text
from workhearth.agent.audit import DECISIONS, AuditLog
from workhearth.trash import Trash

NARROW = {"COLUMNS": "80"}
BOX = re.compile(r"[\u2500-\u257f]")  # box drawing: ─ │ ┏ ┃ ╭ …
CONTENT = "Deploys go through the staging cluster first; rotate its key every 90 days."


def row_with(out: str, needle: str) -> str:
    (line,) = [line for line in out.splitlines() if needle in line]
    return line


def assert_one_plain_table(out: str, header: list[str]) -> list[str]:
    """Lines within 80 columns, no box drawing, the header words first."""
    lines = out.splitlines()
    assert not BOX.search(out), out
    assert all(len(line) <= 80 for line in lines), out
    assert lines[0].split()[: len(header)] == header, out
    return lines


def test_memory_list_gives_the_content_the_width(hearth: Hearth) -> None:
    assert len(CONTENT) > 70
    saved = hearth.json("memory", "save", CONTENT, "--tag", "ops")
    hearth.json("memory", "save", "short one")
    shown = hearth.run("memory", "list", env=NARROW)
    assert shown.code == 0, shown.err
    assert_one_plain_table(shown.out, ["id"])
    line = row_with(shown.out, saved["id"])
    visible = line.split("  ")[-1].strip().rstrip("…")
    assert CONTENT.startswith(visible) and len(visible) >= 45, line
    assert re.search(r"\b\d\d-\d\d \d\d:\d\d\b", line), line  # a short date, no year
    # Into a pipe nothing is cut, and --json keeps its shape.
    whole = hearth.run("memory", "list", env={"COLUMNS": ""})  # (xdist sets COLUMNS=80)
    assert CONTENT in whole.out and " tags " in whole.out and "ops" in whole.out
    listed = hearth.json("memory", "list", env=NARROW)
    assert [e["content"] for e in listed["entries"]] == ["short one", CONTENT]


def test_a_40_character_session_title_shows_whole_and_its_short_id_works(
    hearth: Hearth,
) -> None:
    title = "Fix the login redirect loop on Safari 17"
    assert len(title) == 40
    deep = hearth.elsewhere / "clients" / "a-rather-long-client-name" / "web-app"
    sid = hearth.seed([text("user", title), text("assistant", "done")], workspace=deep)
    other = hearth.seed([text("user", "x " * 60)])
    shown = hearth.run("sessions", "list", env=NARROW)
    assert shown.code == 0, shown.err
    assert_one_plain_table(shown.out, ["id", "updated", "title"])
    line = row_with(shown.out, title)
    short = line.split()[0]
    assert sid.startswith(short) and len(short) < len(sid), line
    assert not other.startswith(short)
    opened = hearth.run("sessions", "show", short, "--json")
    assert opened.code == 0 and orjson.loads(opened.out)["session_id"] == sid, opened.err
    # Wide enough, the whole id and the workspace come back.
    wide = hearth.run("sessions", "list", env={"COLUMNS": "400"})
    assert sid in wide.out and str(deep) in wide.out
    assert {s["session_id"] for s in hearth.json("sessions", "list", env=NARROW)} == {sid, other}


def test_a_long_trashed_file_name_shows_and_its_short_id_restores(hearth: Hearth) -> None:
    name = "quarterly-report-final-version-dec-2026.xlsx"
    folder = hearth.workspace / "reports" / "finance-department" / "archive"
    folder.mkdir(parents=True)
    (folder / name).write_text("numbers")
    (folder / "b.txt").write_text("x" * 4_100)
    trash = Trash(hearth.home / "trash")
    item = trash.put(folder / name)
    trash.put(folder / "b.txt")
    shown = hearth.run("trash", "list", env=NARROW)
    assert shown.code == 0, shown.err
    lines = assert_one_plain_table(shown.out, ["id"])
    line = row_with(shown.out, name)
    assert line.endswith("…/" + name) or line.endswith(str(folder / name)), lines
    short = line.split()[0]
    assert item.id.startswith(short) and len(short) < len(item.id)
    restored = hearth.run("trash", "restore", short)
    assert restored.code == 0, restored.err
    assert (folder / name).read_text() == "numbers"
    full = hearth.run("trash", "list", env={"COLUMNS": "400"})
    assert "4.1 kB" in full.out and str(folder / "b.txt") in full.out


def test_audit_decisions_are_whole_words(hearth: Hearth) -> None:
    sid = hearth.seed([text("user", "hi")])
    log = AuditLog(hearth.home / "audit.jsonl")
    for decision in DECISIONS:
        log.record(
            session=sid,
            mode="agent",
            tool="mcp__filesystem-server__read_multiple_files",
            decision=decision,
            arguments={"command": "ls -la"},
            summary="total 48 drwxr-xr-x 5 user user 4096 Feb 10 22:59 . " * 3,
        )
    shown = hearth.run("audit", env=NARROW)
    assert shown.code == 0, shown.err
    assert_one_plain_table(shown.out, ["time"])
    rows = [line for line in shown.out.splitlines() if "total 48" in line]
    assert len(rows) == len(DECISIONS), shown.out
    for decision, line in zip(DECISIONS, rows, strict=True):
        assert f"  {decision}  " in line, line
        summary = line.split("  ")[-1].strip()
        assert len(summary) >= 20 and "mcp__filesyst" in line, line
    assert f"session {sid}" in shown.out  # the whole id, on its own line


def test_every_table_is_the_same_plain_style(hearth: Hearth) -> None:
    hearth.json("memory", "save", CONTENT)
    hearth.seed([text("user", "a title")])
    Trash(hearth.home / "trash").put(_file(hearth.workspace / "gone.txt"))
    AuditLog(hearth.home / "audit.jsonl").record(
        session=None, mode="ask", tool="read_file", decision="allowed-by-mode"
    )
    assert hearth.run("workspace", "add", str(hearth.elsewhere)).code == 0
    (hearth.home / "config.toml").write_text(
        '[mcp.servers.files]\ncommand = "python3"\n'
        'args = ["-m", "a_rather_long_module_name.server", "--root", "/srv/some/long/path"]\n'
    )
    env = {**NARROW, "HEARTH_MODEL": "openai:qwen-plus", "OPENAI_API_KEY": "sk-test"}
    for args in (
        ("memory", "list"),
        ("sessions", "list"),
        ("trash", "list"),
        ("audit",),
        ("skills", "list"),
        ("skills", "examples", "docx"),
        ("workspace", "list"),
        ("models", "list"),
        ("mcp", "list"),
    ):
        shown = hearth.run(*args, env=env)
        assert shown.code == 0, (args, shown.err)
        assert not BOX.search(shown.out), (args, shown.out)
        table = [line for line in shown.out.splitlines() if not line.startswith("current ")]
        assert all(len(line) <= 80 for line in table), (args, shown.out)


def _file(path: Path) -> Path:
    path.write_text("bye")
    return path


GROUPS = [
    (),
    ("sessions",),
    ("memory",),
    ("mcp",),
    ("models",),
    ("shell",),
    ("skills",),
    ("trash",),
    ("team",),
    ("team", "user"),
    ("workspace",),
]


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: " ".join(g) or "hearth")
def test_help_summaries_wrap_at_80_columns_and_are_never_cut(
    hearth: Hearth, group: tuple[str, ...]
) -> None:
    shown = hearth.run(*group, "--help", env=NARROW)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert all(len(line) <= 80 for line in lines), shown.out
    commands = lines[lines.index("Commands:") + 1 :]
    assert commands, shown.out
    # Each command's summary is its first sentence, whole: continuation lines join it.
    summaries: dict[str, str] = {}
    name = ""
    for line in commands:
        if not line.strip():
            break
        head = re.match(r"  (\S+)\s{2,}(.*)", line)
        if head:
            name, summaries[name] = head.group(1), head.group(2)
        else:
            summaries[name] += " " + line.strip()
    assert summaries, shown.out
    for name, summary in summaries.items():
        assert not summary.endswith("..."), f"{name}: {summary}"
        assert summary.endswith((".", ")")), f"{name}: {summary}"
        own = hearth.run(*group, name, "--help", env={"COLUMNS": "400"})
        assert own.code == 0, own.err
        assert summary in " ".join(own.out.split()), f"{name}: {summary}"
