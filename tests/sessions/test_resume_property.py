"""Property: whatever the crash point or damage, resume yields a conversation both APIs
accept, and no message written before the damage is lost (DESIGN §3 Resume)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import conversations
from workhearth.config import load_config
from workhearth.models.adapters import to_anthropic, to_openai
from workhearth.models.validate import anthropic_problems, openai_problems
from workhearth.sessions.session import TRANSCRIPT, Session
from workhearth.sessions.store import SessionStore

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def fingerprint(block: dict[str, Any]) -> tuple:
    kind = block["type"]
    if kind == "text":
        return (kind, block["text"])
    if kind == "thinking":
        return (kind, block.get("thinking"), block.get("signature"))
    if kind == "redacted_thinking":
        return (kind, block["data"])
    if kind == "tool_use":
        return (kind, block["id"], block["name"])
    if kind == "tool_result":
        return (kind, block["tool_use_id"])
    return (kind,)


def flat(messages: list[dict[str, Any]]) -> list[tuple]:
    return [fingerprint(b) for m in messages for b in m["content"]]


def is_subsequence(small: list[tuple], big: list[tuple]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def written_session(tmp_path: Path, messages: list[dict[str, Any]]) -> tuple[Session, list[bytes]]:
    home = tmp_path / "home"
    shutil.rmtree(home, ignore_errors=True)
    store = SessionStore(load_config({"HEARTH_HOME": str(home), "HEARTH_FSYNC": "never"}), tmp_path)
    session = store.create(model="m")
    for msg in messages:
        session.append_message(msg)
    session.close()
    return session, session.transcript.read_bytes().splitlines(keepends=True)


def check_resume(folder: Path, config: Any, must_keep: list[dict[str, Any]]) -> None:
    session = Session(folder, config)
    resumed = session.resume("anthropic")
    canonical = resumed.canonical
    if not canonical:  # nothing survived to resume: only allowed when nothing had to
        assert not [m for m in must_keep if m["role"] == "user"]
        return
    assert not anthropic_problems(to_anthropic(None, canonical)), anthropic_problems(
        to_anthropic(None, canonical)
    )
    assert not openai_problems(to_openai(None, canonical)), openai_problems(
        to_openai(None, canonical)
    )
    keep = must_keep
    # Why: a last assistant turn holding only unsigned thinking is an unfinished turn, dropped by design.
    if (
        keep
        and keep[-1]["role"] == "assistant"
        and all(b["type"] == "thinking" and not b.get("signature") for b in keep[-1]["content"])
    ):
        keep = keep[:-1]
    assert is_subsequence(flat(keep), flat(canonical))  # type: ignore[arg-type]


@SETTINGS
@given(conversations(), st.data())
def test_cut_at_any_byte_offset(
    tmp_path: Path, messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    session, lines = written_session(tmp_path, messages)
    whole = b"".join(lines)
    meta_len = len(lines[0])
    # Why: the file length varies with timestamps, so draw a position and scale it.
    picks = data.draw(st.lists(st.integers(0, 1 << 20), min_size=1, max_size=8))
    cuts = [meta_len + p * (len(whole) - meta_len) // (1 << 20) for p in picks]
    ends = [len(b"".join(lines[: i + 1])) for i in range(len(lines))]
    for cut in cuts:
        session.transcript.write_bytes(whole[:cut])
        complete = sum(1 for e in ends if cut >= e - 1) - 1  # message lines fully present
        check_resume(session.folder, session.config, messages[:complete])


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(conversations(max_rounds=3))
def test_cut_at_every_byte_offset(tmp_path: Path, messages: list[dict[str, Any]]) -> None:
    session, lines = written_session(tmp_path, messages)
    whole = b"".join(lines)
    ends = [len(b"".join(lines[: i + 1])) for i in range(len(lines))]
    for cut in range(len(lines[0]), len(whole) + 1):
        session.transcript.write_bytes(whole[:cut])
        complete = sum(1 for e in ends if cut >= e - 1) - 1
        check_resume(session.folder, session.config, messages[:complete])


DAMAGE = ["torn", "glued", "nul", "duplicate", "foreign", "flip", "zero_line"]


def damage(lines: list[bytes], at: int, kind: str, foreign: bytes) -> tuple[bytes, int]:
    """Damage line ``at``; return the file and how many leading lines must survive."""
    before, line, after = b"".join(lines[:at]), lines[at], b"".join(lines[at + 1 :])
    if kind == "torn":
        return before + line[: len(line) // 2], at
    if kind == "glued":
        return before + line.rstrip(b"\n") + after, len(lines)
    if kind == "nul":
        return before + b"\x00" * 512 + line + after, len(lines)
    if kind == "duplicate":
        return before + line + line + after, len(lines)
    if kind == "foreign":
        return before + foreign + line + after, len(lines)
    if kind == "flip":
        mid = len(line) // 2
        return before + line[:mid] + bytes([line[mid] ^ 0x20]) + line[mid + 1 :] + after, at
    return before + b"\x00" * (len(line) - 1) + b"\n" + after, at


@SETTINGS
@given(conversations(), st.sampled_from(DAMAGE), st.data())
def test_every_kind_of_damage(
    tmp_path: Path, messages: list[dict[str, Any]], kind: str, data: st.DataObject
) -> None:
    session, lines = written_session(tmp_path, messages)
    _other, other_lines = written_session(
        tmp_path / "other", [{"role": "user", "content": [{"type": "text", "text": "elsewhere"}]}]
    )
    at = 1 + data.draw(st.integers(0, 1 << 20)) % (len(lines) - 1)
    blob, keep_lines = damage(lines, at, kind, other_lines[1])
    session.transcript.write_bytes(blob)
    check_resume(session.folder, session.config, messages[: keep_lines - 1])
    loaded = Session(session.folder, session.config)
    loaded.load(use_snapshot=False, save_snapshot=False)
    glued_last = kind == "glued" and at == len(lines) - 1  # just a missing final newline
    assert sum(loaded.damage.values()) >= (0 if glued_last else 1)
    assert (session.folder / TRANSCRIPT).read_bytes() == blob  # reading never rewrites the log
