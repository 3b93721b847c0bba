"""A team task's plan.md (issue 23): written from the lead's call, read back after the user
edits it, and refused in words when it cannot run (a cycle, an unknown step, no owner)."""

from __future__ import annotations

import pytest

from workhearth.errors import UsageError
from workhearth.tasks.team.plan import Plan, Question, parse_answers, parse_plan, render_plan

CALL = {
    "goal": "A quarterly deck",
    "deliverables": [{"path": "deck.pptx", "format": "pptx", "what": "five slides"}],
    "steps": [
        {"id": "figures", "title": "Gather the figures", "owner": "analyst", "files": ["sales.csv"],
         "produces": ["figures.md"], "checks": ["every quarter has a figure"]},
        {"id": "deck", "title": "Write the deck", "owner": "writer", "depends_on": ["figures"],
         "detail": "Five slides.\nOne chart per quarter."},
    ],
}  # fmt: skip


def test_a_plan_reads_back_as_it_was_written() -> None:
    plan = Plan.from_call(CALL)
    questions = [Question("audience", "Who reads it?", ("board", "team"), "board")]
    text = render_plan(plan, questions, {"audience": "team"})
    assert "- Who reads it? — team" in text
    assert "### 2. Write the deck {#deck}" in text and "- depends on: figures" in text
    assert parse_plan(text) == plan


def test_an_edited_plan_counts() -> None:
    text = render_plan(Plan.from_call(CALL)).replace("- owner: writer", "- owner: researcher")
    text += "\n### 3. Add a budget {#budget}\n- owner: analyst\n- depends on: figures, deck\n"
    plan = parse_plan(text)
    assert plan.step("deck").owner == "researcher"
    assert plan.step("budget").depends_on == ("figures", "deck")
    assert plan.step("deck").detail == "Five slides.\nOne chart per quarter."


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda t: t.replace("- depends on: none", "- depends on: deck"), "circle"),
        (lambda t: t.replace("- depends on: figures", "- depends on: nowhere"), "nowhere"),
        (lambda t: t.replace("- owner: writer\n", ""), "no owner"),
        (lambda t: t.replace("# Plan: A quarterly deck", ""), "no goal"),
        (lambda t: t.split("## Steps")[0], "no steps"),
    ],
)
def test_a_plan_that_cannot_run_is_refused_in_words(edit, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_plan(edit(render_plan(Plan.from_call(CALL))))


def test_answers_are_checked_against_the_questions() -> None:
    qs = [Question("audience", "Who?", ("board", "team"), "board"), Question("n", "How many?")]
    assert parse_answers({"audience": "team", "n": "7"}, qs) == {"audience": "team", "n": "7"}
    with pytest.raises(UsageError, match="board, team"):
        parse_answers({"audience": "everyone"}, qs)
    with pytest.raises(UsageError, match="no question 'x'"):
        parse_answers({"x": "1"}, qs)
    with pytest.raises(UsageError, match="JSON object"):
        parse_answers(["team"], qs)
