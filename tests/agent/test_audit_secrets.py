"""Secrets never reach the audit log or a recalled tool output (DESIGN §4, §5).

Through the real tool registry: a tool's arguments and the one-line summary of
its output are written with the same detector that guards memory.
"""

from __future__ import annotations

import pytest

from tests.agent.conftest import Tree
from workhearth.agent.approval import allow_all
from workhearth.agent.audit import AuditLog, redact_arguments, summarize
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import ToolContext, default_registry
from workhearth.config import Config
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore

# Formats the old audit kept in clear (issue #8); (line, the part that must not be logged).
LEAKS = [
    ("gitlab glpat-p8XzRs0LU5XO-XIdlu_a", "p8XzRs0LU5XO"),
    ("stripe sk_live_FeJMVHoKMuJNhlQkOw17vwWM", "FeJMVHoKMuJN"),
    ("db postgres://app:bqLuPp29LAqR@db.internal:5432/app", "bqLuPp29LAqR"),
    ("Authorization: Basic YWRtaW46elc5WjVpaWpneg==", "YWRtaW46elc5"),
    ('{"password": "jrjwstOOa4ZeQe"}', "jrjwstOOa4ZeQe"),
    ("MYSQL_PWD=LFrRYPzkcgo7 mysql -u root", "LFrRYPzkcgo7"),
]


@pytest.fixture
def ctx(session: Session, fs: SafeFS, store: SessionStore, config: Config) -> ToolContext:
    return ToolContext(
        session=session,
        fs=fs,
        mode="agent",
        memory=None,
        sessions=store,
        approver=allow_all,
        audit=AuditLog(config.paths.audit_log),
        env={"PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(("line", "core"), LEAKS, ids=[c for _, c in LEAKS])
def test_tool_arguments_and_output_summary_are_redacted(
    ctx: ToolContext, tree: Tree, config: Config, line: str, core: str
) -> None:
    reg = default_registry()
    wrote = reg.call("write_file", {"path": "notes.txt", "content": line}, ctx.for_call("c1"))
    assert not wrote.is_error, wrote.content
    read = reg.call("read_file", {"path": "notes.txt"}, ctx.for_call("c2"))
    assert core in read.content  # the model still sees the file it asked for
    logged = config.paths.audit_log.read_text()
    assert core not in logged and "[REDACTED" in logged
    records = AuditLog(config.paths.audit_log).read()
    assert "[REDACTED" in records[-1].summary


def test_recalled_tool_output_is_redacted(ctx: ToolContext) -> None:
    ctx.session.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "env"}}
            ],
        }
    )
    ctx.session.append_message(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "HF=hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp",
                }
            ],
        }
    )
    read = default_registry().call(
        "session_read", {"session_id": ctx.session.id}, ctx.for_call("c3")
    )
    assert "9VLa4wFGyQp74" not in read.content and "[REDACTED" in read.content


def test_a_long_argument_is_redacted_before_it_is_cut() -> None:
    key = "hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp"
    text = "x" * 290 + " " + key
    safe = redact_arguments({"content": text})["content"]
    assert "hf_9VLa" not in safe and safe.endswith("chars]")
    huge = key + " " + "y" * 5_000_000
    assert summarize(huge).startswith("[REDACTED Hugging Face token] yyy")
