"""The team board (issue 23): a line per specialist; on a terminal redrawn in place."""

from __future__ import annotations

import io

from workhearth.cli.team_task import Board


def test_into_a_pipe_each_move_is_a_line() -> None:
    out = io.StringIO()
    board = Board(out, live=False)
    board({"id": "draft", "role": "writer", "status": "running", "started": 100.0})
    board({"id": "draft", "role": "writer", "status": "done", "started": 100.0, "ended": 102.5})
    first, second = out.getvalue().splitlines()
    assert first.startswith("[team] writer      draft            running ")
    assert first.endswith("s") and first.split()[-1][:-1].isdigit()
    assert second == "[team] writer      draft            done 2.5s"


def test_on_a_terminal_the_board_is_redrawn_in_place() -> None:
    out = io.StringIO()
    board = Board(out, live=True)
    board({"id": "a", "role": "writer", "status": "pending"})
    board({"id": "b", "role": "analyst", "status": "pending"})
    board({"id": "a", "role": "writer", "status": "done", "started": 1.0, "ended": 3.0})
    text = out.getvalue()
    assert text.count("\x1b[1F") == 1 and text.count("\x1b[2F") == 1  # moved up, redrew
    last = text.rsplit("\x1b[2F", 1)[1]
    assert "writer      a                done 2.0s" in last and "analyst" in last
