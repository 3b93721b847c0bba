"""A session written by a newer hearth is refused with a clear line, never read as ours
nor appended to (issue #20 item 4), and the listing still shows it is there."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Hearth
from workhearth.app import Workhearth
from workhearth.sessions.codec import SCHEMA_VERSION, encode_line


def newer_session(hearth: Hearth) -> tuple[str, Path]:
    wh = Workhearth(workspace=hearth.workspace, env=hearth.env)
    session = wh.sessions.create(mode="agent")
    session.append_message({"role": "user", "content": "written by a newer hearth"})
    session.close()
    lines = session.transcript.read_bytes().splitlines(keepends=True)
    meta = json.loads(lines[0])
    del meta["crc"]
    meta["schema"] = SCHEMA_VERSION + 1
    session.transcript.write_bytes(encode_line(meta) + b"".join(lines[1:]))
    (session.folder / "snapshot.zst").unlink(missing_ok=True)
    return session.id, session.transcript


def test_a_newer_session_is_refused_in_one_line_and_left_unchanged(hearth: Hearth) -> None:
    sid, transcript = newer_session(hearth)
    before = transcript.read_bytes()
    for args in (("sessions", "show", sid), ("sessions", "latest", sid), ("resume", sid)):
        result = hearth.run(*args)
        assert result.code != 0, args
        assert len(result.err_lines) == 1, result.err
        assert "newer hearth" in result.err_lines[0] and "upgrade hearth" in result.err_lines[0]
        assert "Traceback" not in result.err
    listed = hearth.run("sessions", "list", "--json")
    assert listed.code == 0, listed.err
    (row,) = json.loads(listed.out)
    assert row["session_id"] == sid and "newer hearth" in row["title"]
    assert transcript.read_bytes() == before
