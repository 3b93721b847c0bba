"""audit.jsonl: one safe line per tool call, readable back, never the full output."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

import pytest

from workhearth.agent.audit import AuditLog, redact_arguments, secret_key, summarize

OPENAI_KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2


def test_record_and_read_back(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "home" / "audit.jsonl")
    log.record(
        session="s1",
        mode="agent",
        tool="shell",
        decision="allowed-by-user",
        arguments={"command": "ls"},
        duration=0.123456,
        outcome="ok",
        summary="exit code 0\nlots of output",
        call_id="c1",
    )
    log.record(session="s2", mode="ask", tool="write_file", decision="denied-by-policy")
    records = log.read()
    assert [r.tool for r in records] == ["shell", "write_file"]
    first = records[0]
    assert (first.session, first.mode, first.decision, first.call_id) == (
        "s1",
        "agent",
        "allowed-by-user",
        "c1",
    )
    assert first.arguments == {"command": "ls"} and first.duration == 0.1235
    assert [r.tool for r in log.read(session="s2")] == ["write_file"]
    assert [r.tool for r in log.read(limit=1)] == ["write_file"]
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert all(json.loads(line) for line in log.path.read_text().splitlines())


def test_secrets_are_redacted_and_secret_keys_dropped() -> None:
    args = {
        "command": f"curl -H 'Authorization: Bearer {OPENAI_KEY}' x",
        "api_key": "plain-value",
        "headers": {"X-Auth-Token": "abc", "accept": "json"},
        "password": "hunter2",
        "max_tokens": 100,
        "items": [OPENAI_KEY, 3, None, True],
    }
    safe = redact_arguments(args)
    text = json.dumps(safe)
    assert OPENAI_KEY not in text and "plain-value" not in text and "hunter2" not in text
    assert "api_key" not in safe and "password" not in safe
    assert safe["headers"] == {"accept": "json"}
    assert safe["max_tokens"] == 100
    assert safe["items"][1:] == [3, None, True]


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("token", True),
        ("auth_token", True),
        ("x-auth-token", True),
        ("password", True),
        ("client_secret", True),
        ("max_tokens", False),
        ("sort_key", False),
        ("path", False),
        ("tokens_used", False),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert secret_key(key) is secret


def test_long_arguments_and_outputs_are_cut(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    rec = log.record(
        session="s",
        mode="quest",
        tool="write_file",
        decision="allowed-by-mode",
        arguments={"path": "a.txt", "content": "x" * 100_000},
        summary="\n\n" + "y" * 5_000 + "\nsecond line",
    )
    assert len(rec.arguments["content"]) < 400 and "+99700 chars" in rec.arguments["content"]
    assert len(rec.summary) < 300 and "second" not in rec.summary
    assert log.path.stat().st_size < 2_000
    assert summarize(f"token is {OPENAI_KEY}") == "token is [REDACTED OpenAI API key]"


def test_bad_decision_is_a_bug(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        AuditLog(tmp_path / "a.jsonl").record(session=None, mode="x", tool="t", decision="maybe")  # type: ignore[arg-type]


def test_torn_lines_are_skipped_and_threads_never_interleave(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")

    def writer(i: int) -> None:
        for j in range(25):
            log.record(
                session=f"s{i}",
                mode="agent",
                tool="read_file",
                decision="allowed-by-mode",
                arguments={"path": f"{i}-{j}" * 50},
            )

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with log.path.open("ab") as fh:
        fh.write(b'{"time": 1, "sess')  # a crash mid-line
    assert len(log.read()) == 200
    assert len(log.read(session="s3")) == 25


def test_a_started_line_shows_until_its_call_ends(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    for call, outcome in (("c1", "started"), ("c2", "started"), ("c1", "error")):
        log.record(
            session="s1",
            mode="agent",
            tool="shell",
            decision="allowed-by-flag",
            outcome=outcome,  # type: ignore[arg-type]
            summary="started, outcome unknown" if outcome == "started" else "exit code 2",
            call_id=call,
        )
    assert len((tmp_path / "audit.jsonl").read_bytes().splitlines()) == 3  # all kept on disk
    # c1 ended; c2 was cut off (a killed hearth): it stays "started".
    assert [(r.call_id, r.outcome) for r in log.read()] == [("c2", "started"), ("c1", "error")]
