"""A team task's state (issue #23): each step's change is a ``team_step`` event of the lead's
transcript, and ``team/state.json`` is a cache rewritten without an fsync — so a state file
that a power loss took back to an older version loses no finished step."""

from __future__ import annotations

from pathlib import Path

from workhearth.app import Workhearth
from workhearth.tasks.team.run import STATE, TEAM_META, TEAM_STEP, _State


def test_a_finished_step_outlives_a_state_file_gone_back_in_time(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    session = wh.sessions.create(mode="quest", extra_meta={TEAM_META: True})
    st = _State(session)
    st.phase = "running"
    st.save()
    before_steps = session.read_file(STATE)
    st.step("a", status="running", started=1.0)
    st.step("a", status="done", ended=2.0, merge={"written": ["a.txt"], "conflicts": []})
    st.step("b", status="running", started=1.5)
    session.close()
    session.write_file(STATE, before_steps)  # what the disk may hold after a power loss

    again = _State(wh.sessions.open(session.id))
    assert again.phase == "running"
    assert again.steps["a"] == {"status": "done", "started": 1.0, "ended": 2.0}
    assert again.steps["b"]["status"] == "running"
    assert again.merges == [{"step": "a", "written": ["a.txt"], "conflicts": []}]
    kinds = [e["type"] for e in wh.sessions.open(session.id).events()]
    assert kinds.count(TEAM_STEP) == 3


def test_the_state_file_is_read_from_where_it_was_written(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    session = wh.sessions.create(mode="quest", extra_meta={TEAM_META: True})
    st = _State(session)
    st.step("a", status="done", ended=2.0, merge={"written": [], "conflicts": []})
    session.close()
    again = _State(wh.sessions.open(session.id))
    # Why: the events before the file's seq are in it already; folding them again would
    # list the merge twice.
    assert len(again.merges) == 1 and again.seq == st.seq
