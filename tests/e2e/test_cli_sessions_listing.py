"""``hearth sessions list|import|export`` and ``hearth audit`` as a new user meets them.

Real Claude Code transcripts are read from ../shared/fixtures (never copied here);
damaged copies are written to the test's temporary folder.
"""

from __future__ import annotations

import re
import zipfile
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import Hearth, Result, chat, text
from tests.shared_data import CLAUDE_CODE_FIXTURES
from workhearth.agent.audit import AuditLog

FIXTURES = CLAUDE_CODE_FIXTURES
needs_fixtures = pytest.mark.usefixtures("claude_code_fixtures")
NARROW = {"COLUMNS": "80"}
ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{16}\b")


def one_error_line(result: Result, *needles: str) -> str:
    assert result.code != 0, result
    assert "Traceback" not in result.out + result.err, result.err
    assert len(result.err_lines) == 1, result.err
    line = result.err_lines[0]
    for needle in needles:
        assert needle.lower() in line.lower(), line
    return line


def last_timestamp(path: Path) -> float:
    stamps = [
        orjson.loads(line).get("timestamp")
        for line in path.read_bytes().splitlines()
        if line.strip()
    ]
    last = [s for s in stamps if isinstance(s, str)][-1]
    return datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()


def first_user_text(path: Path) -> str:
    for line in path.read_bytes().splitlines():
        rec = orjson.loads(line)
        content = (rec.get("message") or {}).get("content")
        if rec.get("type") == "user" and isinstance(content, str) and not rec.get("isMeta"):
            return content
    raise AssertionError("no user prompt")


# ------------------------------------------------------------- 5. damaged imports


@needs_fixtures
def test_a_transcript_cut_mid_line_says_which_line_was_skipped(hearth: Hearth) -> None:
    raw = (FIXTURES / "tool_heavy.jsonl").read_bytes()
    whole = hearth.json("sessions", "import", str(FIXTURES / "tool_heavy.jsonl"))
    assert whole["skipped"] == []
    cut = hearth.elsewhere / "cut.jsonl"
    lines = raw.splitlines(keepends=True)
    cut.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])

    result = hearth.run("sessions", "import", str(cut))
    assert result.code == 0, result.err
    assert "imported" in result.out
    warned = " ".join(result.err_lines)
    assert f"line {len(lines)}" in warned and "cut mid-line" in warned
    assert "incomplete" in warned

    hearth.run("sessions", "delete", ID.search(result.out).group(0))
    data = hearth.json("sessions", "import", str(cut))
    assert data["skipped"] == [
        {"line": len(lines), "reason": "cut mid-line at the end of the file"}
    ]
    assert {"session_id", "workspace", "path", "messages", "sidechains"} <= data.keys()


def test_a_tampered_bundle_names_each_skipped_line(hearth: Hearth, hearth2: Hearth) -> None:
    sid = hearth.seed(chat(27), title="tampered")
    bundle = hearth.elsewhere / "s.zip"
    assert hearth.run("sessions", "export", sid, "--format", "bundle", "-o", str(bundle)).code == 0
    with zipfile.ZipFile(bundle) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    lines = files["transcript.jsonl"].split(b"\n")
    for n in (3, 5, 7, 9, 11):  # 0-based: message lines msg-2, msg-4, … (file lines 4, 6, …)
        lines[n] = lines[n].replace(b"msg-", b"MSG-")
    files["transcript.jsonl"] = b"\n".join(lines)
    with zipfile.ZipFile(bundle, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)

    result = hearth2.run("sessions", "import", str(bundle))
    assert result.code == 0, result.err
    assert "imported 22 messages" in result.out
    warned = result.err_lines
    assert [w for w in warned if "checksum" in w and "line" in w] and len(warned) == 6
    hearth2.run("sessions", "delete", sid)
    hearth2.run("trash", "empty")
    data = hearth2.json("sessions", "import", str(bundle))
    assert data["messages"] == 22
    assert [s["line"] for s in data["skipped"]] == [4, 6, 8, 10, 12]
    assert all("checksum" in s["reason"] for s in data["skipped"])


# ------------------------------------------------------------- 7. telling sessions apart


@needs_fixtures
def test_imported_sessions_list_their_first_prompt_and_their_own_time(hearth: Hearth) -> None:
    source = FIXTURES / "short.jsonl"
    imported = hearth.json("sessions", "import", str(source))
    (row,) = hearth.json("sessions", "list")
    assert row["session_id"] == imported["session_id"]
    assert row["title"] == first_user_text(source)
    assert row["updated"] == pytest.approx(last_timestamp(source), abs=0.01)
    seeded = hearth.seed([text("user", "  fix the\nlogin   bug "), text("assistant", "ok")])
    listed = {s["session_id"]: s for s in hearth.json("sessions", "list")}
    assert listed[seeded]["title"] == "fix the login bug"
    assert list(listed) == [seeded, imported["session_id"]]  # newest work first


@needs_fixtures
def test_sidechains_list_under_their_parent_and_travel_in_its_bundle(
    hearth: Hearth, hearth2: Hearth
) -> None:
    imported = hearth.json("sessions", "import", str(FIXTURES / "subagent.jsonl"))
    parent = imported["session_id"]
    (side,) = [s["session_id"] for s in imported["sidechains"]]
    hearth.seed(chat(2, "newer"))  # a newer, unrelated session lists first
    listed = {s["session_id"]: s for s in hearth.json("sessions", "list")}
    assert listed[side]["parent"] == parent and listed[parent]["parent"] is None

    shown = hearth.run("sessions", "list", env=NARROW)
    rows = shown.out.splitlines()[1:]
    ids = [line.split()[0] for line in rows]  # at 80 columns, a unique prefix of the id

    def row(sid: str) -> int:
        (n,) = [n for n, short in enumerate(ids) if sid.startswith(short)]
        return n

    assert row(side) == row(parent) + 1
    assert "└" in rows[row(side)] and "└" not in rows[row(parent)]

    bundle = hearth.elsewhere / "with-subagent.zip"
    made = hearth.run("sessions", "export", parent, "--format", "bundle", "-o", str(bundle))
    assert made.code == 0, made.err
    moved = hearth2.json("sessions", "import", str(bundle))
    assert moved["session_id"] == parent
    assert [s["session_id"] for s in moved["sidechains"]] == [side]
    assert moved["sidechains"][0]["messages"] == listed[side]["messages"]
    there = {s["session_id"]: s for s in hearth2.json("sessions", "list")}
    assert there[side]["parent"] == parent
    assert (
        hearth2.json("sessions", "show", side, "--count", "30")["total"]
        == (listed[side]["messages"])
    )


def test_list_at_80_columns_is_one_line_per_session_the_title_first(hearth: Hearth) -> None:
    deep = hearth.elsewhere / "a-rather-long-folder-name" / "and-another-level" / "my-project"
    ids = [
        hearth.seed(
            [text("user", f"please refactor the payment module number {i} " * 4)],
            workspace=deep,
        )
        for i in range(3)
    ]
    shown = hearth.run("sessions", "list", env=NARROW)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert len(lines) == 1 + len(ids), shown.out  # nothing wrapped
    assert all(len(line) <= 80 for line in lines), shown.out
    for sid, line in zip(ids[::-1], lines[1:], strict=True):
        # Why a prefix: at 80 columns the title keeps the width; the id, a prefix that
        # `hearth sessions show` takes, is whole up to its date, time and 4 random digits.
        assert sid.startswith(line.split()[0]) and len(line.split()[0]) >= 20
        assert "please refactor the payment module number" in line  # the title keeps the width
    wide = hearth.run("sessions", "list", env={"COLUMNS": "400"})
    assert str(deep) in wide.out and "number 2 please refactor" in wide.out


# ------------------------------------------------------------- audit


def test_audit_at_80_columns_keeps_session_ids_whole(hearth: Hearth) -> None:
    ids = [hearth.seed(chat(2)), hearth.seed(chat(2))]
    log = AuditLog(hearth.home / "audit.jsonl")
    for sid in ids:
        for _ in range(2):
            log.record(
                session=sid,
                mode="agent",
                tool="shell",
                decision="allowed-by-user",
                arguments={"command": "ls -la"},
                summary="total 48 drwxr-xr-x 5 user user 4096 Feb 10 22:59 . " * 3,
            )
    shown = hearth.run("audit", env=NARROW)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert all(len(line) <= 80 for line in lines), shown.out
    assert len(lines) == 1 + 2 + 4, shown.out  # header, one line per session, one per call
    assert [ID.search(line).group(0) for line in lines if ID.search(line)] == ids
    assert sum("allowed-by-user" in line and "total 48" in line for line in lines) == 4

    only = hearth.run("audit", "--session", ids[0][:20], env=NARROW)
    assert only.code == 0 and ids[0] in only.out and ids[1] not in only.out


def test_audit_of_a_session_that_does_not_exist_says_so(hearth: Hearth) -> None:
    one_error_line(hearth.run("audit", "--session", "nope"), "no session", "nope")
    sid = hearth.seed(chat(2))
    quiet = hearth.run("audit", "--session", sid)
    assert quiet.code == 0 and "no tool calls" in quiet.out and sid in quiet.out


# ------------------------------------------------------------- 10. clear refusals


@needs_fixtures
def test_import_into_a_missing_workspace_is_refused(hearth: Hearth) -> None:
    missing = hearth.elsewhere / "no-such-folder"
    result = hearth.run(
        "sessions", "import", str(FIXTURES / "short.jsonl"), "--workspace", str(missing)
    )
    one_error_line(result, str(missing), "does not exist")
    assert hearth.json("sessions", "list") == []


def test_export_into_a_missing_folder_names_the_folder(hearth: Hearth) -> None:
    sid = hearth.seed(chat(2))
    target = hearth.elsewhere / "gone" / "out.zip"
    result = hearth.run("sessions", "export", sid, "--format", "bundle", "-o", str(target))
    line = one_error_line(result, str(target.parent), "does not exist")
    assert ".tmp" not in line and not target.parent.exists()


def test_a_zip_without_bundle_json_is_not_called_a_bundle(hearth: Hearth) -> None:
    other = hearth.elsewhere / "photos.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("a.txt", "hello")
    for extra in ((), ("--from", "bundle")):
        line = one_error_line(hearth.run("sessions", "import", str(other), *extra))
        assert "not a workhearth bundle" in line and "no bundle.json" in line, line
    assert hearth.json("sessions", "list") == []
