"""A damaged transcript header (the meta line) through the real ``hearth`` command.

One flipped byte in the first line used to make a whole session unreadable. Now
``show``, ``verify`` and ``resume`` rebuild what the header held from the folder
name and the other lines, say so, and later appends keep working.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import Hearth, chat, text
from tests.e2e.test_agent_run import Agent, text_reply, write_config
from tests.e2e.test_cli_sessions import assert_one_line_error, texts_of
from tests.fake_providers import FakeProvider

MESSAGES = 299  # plus the meta line: a 300-line transcript
PW = {"HEARTH_PASSPHRASE": "pw"}


def flip(path: Path, where: str | int) -> None:
    """Flip one bit of one byte of the first line: at an offset, or inside a field's value."""
    data = bytearray(path.read_bytes())
    first_end = data.index(b"\n")
    at = where if isinstance(where, int) else data.index(f'"{where}":'.encode()) + len(where) + 5
    at = at % first_end
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def assert_rebuilt(hearth: Hearth, sid: str, total: int, env: dict[str, str] | None = None) -> None:
    """show, verify and resume all read every message and report the damaged header."""
    shown = hearth.run("sessions", "show", sid, "--count", "2", env=env)
    assert shown.code == 0, shown.err
    assert f"2 of {total} messages" in shown.out
    assert "header" in shown.err and "damaged" in shown.err and "Traceback" not in shown.err
    as_json = hearth.json("sessions", "show", sid, env=env)
    assert as_json["total"] == total
    assert any("header" in w for w in as_json["warnings"])

    verify = hearth.run("sessions", "verify", sid, env=env)
    assert verify.code == 1, verify  # damaged, so not ok, but nothing is lost
    assert f"{total} messages" in verify.out
    assert "header (meta line) was damaged and rebuilt" in verify.out
    report = hearth.run("sessions", "verify", sid, "--json", env=env)
    assert report.code == 1
    data = orjson.loads(report.out)
    assert data["header_rebuilt"] is True and data["messages"] == total
    assert data["damage"]["checksum"] == 1

    resumed = hearth.run("resume", sid, "--print-messages", "--format", "openai", env=env)
    assert resumed.code == 0, resumed.err
    assert "header" in resumed.err and "Traceback" not in resumed.err
    messages = orjson.loads(resumed.out)["messages"]
    assert len(messages) == total
    assert messages[0]["content"] in ("msg-0", [{"type": "text", "text": "msg-0"}])


@pytest.mark.parametrize(
    "where", [0, "model", "workspace", -3], ids=["brace", "model", "ws", "crc"]
)
def test_one_damaged_byte_in_the_header_loses_no_message(hearth: Hearth, where: str | int) -> None:
    sid = hearth.seed(chat(MESSAGES))
    flip(hearth.transcript(sid), where)
    assert_rebuilt(hearth, sid, MESSAGES)
    listed = hearth.json("sessions", "list")
    assert listed[0]["session_id"] == sid and listed[0]["messages"] == MESSAGES
    assert listed[0]["workspace"] == str(hearth.workspace)

    # The writer goes on after the last good line; the header stays reported.
    with hearth.store().open(sid) as session:
        session.append_message(text("assistant", "appended after the damage"))
    shown = hearth.json("sessions", "show", sid, "--count", "1")
    assert shown["total"] == MESSAGES + 1
    assert texts_of(shown["messages"]) == ["appended after the damage"]
    assert_rebuilt(hearth, sid, MESSAGES + 1)


def test_resume_with_a_model_continues_a_session_whose_header_is_damaged(hearth: Hearth) -> None:
    sid = hearth.seed(chat(MESSAGES))  # ends on a user message: resume answers it
    flip(hearth.transcript(sid), 0)
    write_config(hearth)
    with FakeProvider([text_reply("openai", "Answered ", "after the damage.")]) as fake:
        agent = Agent(hearth, "openai", fake)
        result = agent.run("resume", sid, "--yes")
        assert result.code == 0, result.err
        assert "after the damage." in result.out
        (body,) = fake.bodies
        sent = [m["content"] for m in body["messages"] if m["role"] != "system"]
        assert "msg-0" in str(sent[0]) and "msg-298" in str(sent[-1])
    shown = hearth.json("sessions", "show", sid, "--count", "1")
    assert shown["total"] == MESSAGES + 1
    assert texts_of(shown["messages"]) == ["Answered after the damage."]
    assert_rebuilt(hearth, sid, MESSAGES + 1)


@pytest.mark.parametrize("where", ["model", 0])
def test_an_encrypted_session_opens_when_the_key_decrypts_its_other_lines(
    hearth: Hearth, where: str | int
) -> None:
    enc = {"HEARTH_ENCRYPT": "1", **PW}
    sid = hearth.seed(chat(MESSAGES), env=enc)
    flip(hearth.transcript(sid), where)
    assert_rebuilt(hearth, sid, MESSAGES, env=PW)
    with hearth.store(env=PW).open(sid) as session:
        session.append_message(text("assistant", "sealed after the damage"))
    shown = hearth.json("sessions", "show", sid, "--count", "1", env=PW)
    assert texts_of(shown["messages"]) == ["sealed after the damage"]
    assert b"sealed after the damage" not in hearth.transcript(sid).read_bytes()
    # A wrong key or none is still reported as such, in one line.
    assert_one_line_error(
        hearth.run("sessions", "show", sid, env={"HEARTH_PASSPHRASE": "nope"}), "key"
    )
    assert_one_line_error(hearth.run("resume", sid, "--print-messages"), "key")


def test_a_key_file_session_opens_even_when_its_key_check_is_damaged(
    hearth: Hearth, tmp_path: Path
) -> None:
    env = {"HEARTH_ENCRYPT": "1", "HEARTH_KEY_FILE": str(tmp_path / "hearth.key")}
    sid = hearth.seed(chat(MESSAGES), env=env)
    flip(hearth.transcript(sid), "key_check")
    assert_rebuilt(hearth, sid, MESSAGES, env=env)


def test_a_damaged_passphrase_salt_is_reported_clearly(hearth: Hearth) -> None:
    sid = hearth.seed(chat(4), env={"HEARTH_ENCRYPT": "1", **PW})
    data = bytearray(hearth.transcript(sid).read_bytes())
    at = data.index(b'"salt":"') + len(b'"salt":"')
    data[at] = ord("A") if data[at] != ord("A") else ord("B")  # still base64: a wrong salt
    hearth.transcript(sid).write_bytes(bytes(data))
    line = assert_one_line_error(hearth.run("sessions", "show", sid, env=PW), "header")
    # Why: the temporary folder's name holds "salt" too; check the words of the message.
    assert "header (meta line) is damaged" in line and "passphrase's salt" in line


def test_a_bundle_of_a_session_with_a_damaged_header_imports_elsewhere(
    hearth: Hearth, hearth2: Hearth
) -> None:
    sid = hearth.seed(chat(MESSAGES))
    flip(hearth.transcript(sid), "mode")
    bundle = hearth.elsewhere / "damaged.bundle"
    made = hearth.run("sessions", "export", sid, "--format", "bundle", "-o", str(bundle))
    assert made.code == 0, made.err
    imported = hearth2.json(
        "sessions", "import", str(bundle), "--workspace", str(hearth2.workspace)
    )
    assert imported["session_id"] == sid and imported["messages"] == MESSAGES
    shown = hearth2.json("sessions", "show", sid, "--count", "1")
    assert shown["total"] == MESSAGES and texts_of(shown["messages"]) == ["msg-298"]
