"""Issue #21, through the real ``hearth run``: the terminal words a produced file's verdict
as the library does (the same words the model read), and a failing product is judged
at the task's end through the tools' confined reads, never by following a link out."""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import shlex
import shutil

from tests.check import files as F
from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401 (fixtures)
    agent_for,
    calls_reply,
    text_reply,
    tool_results,
)

API = "openai"


def test_the_terminal_says_the_verdict_the_model_read(hearth: Hearth, agent_for, tmp_path) -> None:
    """One verdict, worded in one place: the terminal's line is the tool result's line."""
    made = F.xlsx_formula(tmp_path / "div0.xlsx", "#DIV/0!")
    replies = [
        calls_reply(API, ("call_cp", "shell", {"command": f"cp {shlex.quote(str(made))} t.xlsx"})),
        text_reply(API, "t.xlsx is ready."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "make t.xlsx", "--mode", "agent", "--yes", timeout=120)
    assert result.code != 0 and "Traceback" not in result.err
    seen = tool_results(API, agent.fake.bodies[-1])["call_cp"][0]
    (model_line,) = [line for line in seen.splitlines() if line.startswith("[hearth check] ")]
    verdict = model_line.removeprefix("[hearth check] t.xlsx: ")
    assert verdict.startswith("FAILS: shows #DIV/0! (Sales!B2)"), verdict
    assert f"checked t.xlsx: {verdict}" in result.err.splitlines(), result.err
    if shutil.which("soffice"):
        assert verdict.endswith(" · 1 page"), verdict


def test_a_failing_product_swapped_for_a_link_out_is_not_read(
    hearth: Hearth, agent_for, tmp_path
) -> None:
    """The file failed its check; then it became a link to a file outside the authorized
    folders, holding the very same bytes. Following the link would find those bytes
    "unchanged" and blame the outside file; hearth does not read it, and says why."""
    outside = tmp_path / "private" / "report.docx"
    outside.parent.mkdir()
    there = shlex.quote(str(outside))
    # The bytes the failing product had, moved out, and a link to them left in its place.
    link = f"mv report.docx {there} && ln -s {there} report.docx"
    replies = [
        calls_reply(
            API, ("call_bad", "write_file", {"path": "report.docx", "content": "# not a docx"})
        ),
        calls_reply(API, ("call_ln", "shell", {"command": link})),
        text_reply(API, "The report is ready."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "write report.docx", "--mode", "agent", "--yes", timeout=120)
    assert (hearth.workspace / "report.docx").is_symlink()
    assert result.code != 0 and "Traceback" not in result.err
    (session_id,) = agent.session_ids()
    shown = hearth.json("sessions", "show", session_id)
    assert shown["status"] == "failed", shown
    reason = shown["reason"]
    assert "report.docx" in reason and "link out of the authorized folders" in reason, reason
    assert "not a valid Office file" not in reason, reason
