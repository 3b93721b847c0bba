"""Issue #21, through the real ``hearth run``: hearth checks each office file a tool call
produced before the model hears back, keeps the receipt (and thumbnails) in the
session's ``receipts/`` folder, and a task that says "done" while a file it produced
still fails its check ends ``failed``, naming the file and the problem."""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import json
import shlex
import sys

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401 (fixtures)
    agent_for,
    assert_valid_requests,
    calls_reply,
    text_reply,
    tool_results,
)

API = "openai"
MAKE_DOCX = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
    "from docx import Document; d = Document(); d.add_heading('Quarterly report', 1);"
    " d.add_paragraph('Sales grew 12 % in the third quarter.'); d.save('report.docx')"
)


def test_a_broken_file_is_caught_then_a_good_one_passes(hearth: Hearth, agent_for) -> None:
    replies = [
        calls_reply(
            API, ("call_bad", "write_file", {"path": "report.docx", "content": "# not a docx"})
        ),
        calls_reply(API, ("call_good", "shell", {"command": MAKE_DOCX})),
        text_reply(API, "The report is ready."),
    ]
    agent = agent_for(API, replies)
    result = agent.run(
        "run", "write the quarterly report as report.docx", "--mode", "agent", "--yes"
    )
    assert result.code == 0, result.err
    assert_valid_requests(API, agent.fake)
    seen = tool_results(API, agent.fake.bodies[-1])
    bad, good = seen["call_bad"][0], seen["call_good"][0]
    assert "[hearth check] report.docx: FAILS: not a valid Office file" in bad
    assert "[hearth check] report.docx: ok · 1 page" in good

    (session_id,) = agent.session_ids()
    folder = hearth.session_dir(session_id) / "receipts"
    receipts = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    by_call = {r["call_id"]: r for r in receipts}
    assert set(by_call) == {"call_bad", "call_good"}
    assert by_call["call_bad"]["ok"] is False and by_call["call_good"]["ok"] is True
    thumbs = by_call["call_good"]["thumbnails"]
    assert thumbs and (folder / thumbs[0]).read_bytes().startswith(b"\x89PNG")
    shown = hearth.json("sessions", "show", session_id)
    assert shown["status"] == "done", shown
    # The terminal: one line per produced file (its latest receipt), and its thumbnails.
    lines = result.err.splitlines()
    assert "checked report.docx: ok · 1 page" in lines, result.err
    (thumb_line,) = [line for line in lines if line.startswith("  thumbnails: ")]
    assert thumb_line.split()[1] == str(folder / thumbs[0])


def test_done_with_a_failing_file_left_behind_is_failed(hearth: Hearth, agent_for) -> None:
    replies = [
        calls_reply(
            API, ("call_bad", "write_file", {"path": "table.xlsx", "content": "a,b\n1,2\n"})
        ),
        text_reply(API, "Done: table.xlsx is written."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "make table.xlsx", "--mode", "agent", "--yes")
    assert result.code != 0
    assert "table.xlsx" in result.err and "fails its check" in result.err
    assert "checked table.xlsx: FAILS: not a valid Office file" in result.err
    (session_id,) = agent.session_ids()
    shown = hearth.json("sessions", "show", session_id)
    assert shown["status"] == "failed"
    assert "table.xlsx" in shown["reason"] and "not a valid Office file" in shown["reason"]


def test_a_link_out_of_the_workspace_is_not_read_rendered_or_kept(
    hearth: Hearth, agent_for, tmp_path
) -> None:
    """A "produced" file that is a link to a document outside the authorized folders is
    refused by the check (read through the tools' confined reads), not rendered into
    the session's receipts."""
    from docx import Document

    secret = tmp_path / "private" / "salaries.docx"
    secret.parent.mkdir()
    doc = Document()
    doc.add_paragraph("Confidential salary table")
    doc.save(str(secret))
    replies = [
        calls_reply(
            API, ("call_ln", "shell", {"command": f"ln -s {shlex.quote(str(secret))} r.docx"})
        ),
        text_reply(API, "Linked."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "link it", "--mode", "agent", "--yes")
    assert result.code == 0, result.err
    seen = tool_results(API, agent.fake.bodies[-1])["call_ln"][0]
    assert "[hearth check] r.docx: could not be checked" in seen
    assert "Confidential" not in seen
    (session_id,) = agent.session_ids()
    folder = hearth.session_dir(session_id) / "receipts"
    assert not folder.exists() or not any(folder.iterdir())
