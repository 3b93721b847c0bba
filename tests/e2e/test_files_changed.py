"""Issue 18 item 5, through the real ``hearth run``: "files changed" lists exactly what
changed on disk during the task, by whichever tool — a denied write and a write
stopped before approval are not listed; a shell command's writes and deletes, the
delete tool and an edit are. ``hearth sessions show ID`` (and ``--json``) list them
after the run ended.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import os
import pty
from typing import Any

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401 (fixtures)
    _approval_script,
    agent_for,
    assert_valid_requests,
    calls_reply,
    text_reply,
)

API = "openai"


def changes_of(hearth: Hearth, session_id: str) -> list[tuple[str, str, str, str]]:
    shown = hearth.json("sessions", "show", session_id)
    return [
        (c["path"], c["kind"], c["tool"], c["call_id"]) for c in shown["files_changed"]["changes"]
    ]


def test_files_changed_lists_what_changed_on_disk_by_any_tool(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    (ws / "b.txt").write_text("to be removed by a command\n")
    (ws / "old.md").write_text("to be deleted\n")
    (ws / "notes.md").write_text("draft one\n")
    replies = [
        calls_reply(API, ("call_w", "write_file", {"path": "denied.txt", "content": "no"})),
        calls_reply(API, ("call_s", "shell", {"command": "echo x > a.txt; rm b.txt"})),
        calls_reply(API, ("call_d", "delete", {"path": "old.md"})),
        calls_reply(
            API,
            (
                "call_e",
                "edit_file",
                {"path": "notes.md", "old_string": "one", "new_string": "two"},
            ),
        ),
        text_reply(API, "Done."),
    ]
    agent = agent_for(API, replies)
    master, slave = pty.openpty()
    try:
        os.write(master, b"n\ny\ny\ny\n")  # no to the write, yes to the rest
        result = agent.run("run", "tidy the folder", "--mode", "agent", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)

    assert result.code == 0, result.err
    assert not (ws / "denied.txt").exists() and (ws / "a.txt").read_text() == "x\n"
    assert not (ws / "b.txt").exists() and not (ws / "old.md").exists()
    assert (ws / "notes.md").read_text() == "draft two\n"
    assert_valid_requests(API, agent.fake)
    (session_id,) = agent.session_ids()

    assert changes_of(hearth, session_id) == [
        ("a.txt", "created", "shell", "call_s"),
        ("b.txt", "deleted", "shell", "call_s"),
        ("old.md", "deleted", "delete", "call_d"),
        ("notes.md", "modified", "edit_file", "call_e"),
    ]
    shown = hearth.run("sessions", "show", session_id)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    start = lines.index("files changed (4):")
    assert [line.split() for line in lines[start + 1 :]] == [
        ["created", "a.txt", "(shell", "call_s)"],
        ["deleted", "b.txt", "(shell", "call_s)"],
        ["deleted", "old.md", "(delete", "call_d)"],
        ["modified", "notes.md", "(edit_file", "call_e)"],
    ]
    assert "denied.txt" not in shown.out.split("files changed")[1]


def test_a_write_stopped_before_approval_is_not_listed(hearth: Hearth, agent_for) -> None:
    agent = agent_for(API, _approval_script(API))
    result = agent.run("run", "write two files", "--mode", "agent", timeout=20)
    assert result.code == 1, result.err  # nobody at a terminal to approve: stopped
    (session_id,) = agent.session_ids()
    assert not (hearth.workspace / "yes.txt").exists()
    shown: dict[str, Any] = hearth.json("sessions", "show", session_id)
    assert shown["files_changed"] == {
        "session_id": session_id,
        "changes": [],
        "omitted": 0,
        "untracked": None,
    }
    assert "files changed" not in hearth.run("sessions", "show", session_id).out

    # Resumed with --yes, the first write runs and is listed; the refused one is not.
    assert agent.run("resume", session_id, "--yes", timeout=20).code == 0
    assert changes_of(hearth, session_id) == [
        ("no.txt", "created", "write_file", "call_n"),
    ]
