"""Transcript importers: real Claude Code fixtures plus synthetic files built here."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.shared_data import CLAUDE_CODE_FIXTURES
from workhearth.errors import ImportFormatError, NotFoundError, UsageError
from workhearth.sessions.importers import ImportedSession, detect_format, load

FIXTURES = CLAUDE_CODE_FIXTURES
needs_fixtures = pytest.mark.usefixtures("claude_code_fixtures")
FIXTURE_NAMES = ["short.jsonl", "tool_heavy.jsonl", "subagent.jsonl"]


# --- independent reading of the raw files -------------------------------------------------


def raw_records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def simple_chain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plainest walk: last-written leaf, then parents (or logical parents) to the root."""
    main = [r for r in records if r.get("uuid") and not r.get("isSidechain")]
    by_uuid = {r["uuid"]: r for r in main}
    named = {r.get("parentUuid") for r in main} | {r.get("logicalParentUuid") for r in main}
    cur = [r for r in main if r["uuid"] not in named][-1]
    chain = []
    while cur is not None:
        chain.append(cur)
        cur = by_uuid.get(cur.get("parentUuid")) or by_uuid.get(cur.get("logicalParentUuid"))
    return chain[::-1]


def is_local_command_noise(text: str) -> bool:
    text = text.strip()
    return text.startswith("<local-command-") or (
        text.startswith("<command-name>") and "<command-args></command-args>" in text
    )


def raw_texts(rec: dict[str, Any]) -> list[str]:
    content = rec["message"].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return [b["text"] for b in blocks if b.get("type") == "text" and b["text"].strip()]


def texts(messages: list[dict[str, Any]], role: str) -> list[str]:
    return [
        b["text"]
        for m in messages
        if m["role"] == role
        for b in m["content"]
        if b["type"] == "text"
    ]


def is_subsequence(small: list[Any], big: list[Any]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


# --- real fixtures --------------------------------------------------------------------------


@needs_fixtures
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_loses_no_prompt_or_answer(name: str) -> None:
    path = FIXTURES / name
    chain = simple_chain(raw_records(path))
    want_user = [
        t
        for r in chain
        if r.get("type") == "user"
        for t in raw_texts(r)
        if not is_local_command_noise(t)
    ]
    want_assistant = [t for r in chain if r.get("type") == "assistant" for t in raw_texts(r)]

    session = load(path)

    assert detect_format(path) == "claude-code"
    assert want_user and want_assistant
    assert texts(session.messages, "user") == want_user
    assert is_subsequence(want_assistant, texts(session.messages, "assistant"))
    everything = {
        t for r in raw_records(path) if isinstance(r.get("message"), dict) for t in raw_texts(r)
    }
    assert set(texts(session.messages, "assistant")) <= everything
    assert session.skipped_lines == 0


@needs_fixtures
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_tool_calls_are_answered_next(name: str) -> None:
    session = load(FIXTURES / name)
    assert_tool_pairs(session)
    for side in session.sidechains:
        assert_tool_pairs(side)


def assert_tool_pairs(session: ImportedSession) -> None:
    """Every tool_use is answered in the very next message, unless it ends the conversation."""
    msgs = session.messages
    seen_results: set[str] = set()
    for i, msg in enumerate(msgs):
        seen_results |= {b["tool_use_id"] for b in msg["content"] if b["type"] == "tool_result"}
        calls = [b["id"] for b in msg["content"] if b["type"] == "tool_use"]
        if not calls:
            continue
        if i == len(msgs) - 1:
            continue  # an interrupted turn at the very end
        answered = {b.get("tool_use_id") for b in msgs[i + 1]["content"]}
        assert msgs[i + 1]["role"] == "user"
        assert set(calls) <= answered, f"message {i} has unanswered tool calls"
    all_ids = [b["id"] for m in msgs for b in m["content"] if b["type"] == "tool_use"]
    assert len(all_ids) == len(set(all_ids))


@needs_fixtures
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_split_assistant_messages_are_merged(name: str) -> None:
    path = FIXTURES / name
    chain_ids = {
        r["message"]["id"] for r in simple_chain(raw_records(path)) if r.get("type") == "assistant"
    }
    session = load(path)
    got = [m["id"] for m in session.messages if m["role"] == "assistant"]
    assert len(got) == len(set(got))
    assert set(got) == chain_ids
    assert all(m.get("model") for m in session.messages if m["role"] == "assistant")
    assert session.model == "claude-opus-4-6"


@needs_fixtures
@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_signed_thinking_is_kept_byte_identical(name: str) -> None:
    path = FIXTURES / name
    raw = [
        orjson.dumps({"type": "thinking", "thinking": b["thinking"], "signature": b["signature"]})
        for r in simple_chain(raw_records(path))
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b.get("type") == "thinking" and b.get("signature")
    ]
    got = [
        orjson.dumps(b)
        for m in load(path).messages
        for b in m["content"]
        if b["type"] == "thinking"
    ]
    assert raw, "each fixture has signed thinking on its main chain"
    assert is_subsequence(raw, got)
    assert all(b"signature" in block for block in got)


@needs_fixtures
def test_fixture_subagent_kept_apart() -> None:
    session = load(FIXTURES / "subagent.jsonl")
    assert len(session.sidechains) == 1
    side = session.sidechains[0]
    assert side.agent_id == "afb92ff"
    assert side.title == "Draft beads for linting setup"
    assert side.model == "claude-haiku-4-5-20251001"
    assert texts(side.messages, "user")[0].startswith("Draft bead content")
    side_tools = {b["id"] for m in side.messages for b in m["content"] if b["type"] == "tool_use"}
    main_tools = {
        b["id"] for m in session.messages for b in m["content"] if b["type"] == "tool_use"
    }
    assert side_tools and not side_tools & main_tools
    assert "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX" in main_tools  # the Task call stays in the main chain


@needs_fixtures
def test_fixture_metadata() -> None:
    session = load(FIXTURES / "short.jsonl")
    assert session.source_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert session.workspace == "/home/marco/projects/spotter"
    assert session.created == "2026-02-10T21:11:52.438Z"
    assert session.sidechains == []
    assert all("id" in m for m in session.messages)


# --- synthetic Claude Code files ------------------------------------------------------------


class Transcript:
    """Builds Claude Code records with increasing timestamps."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.tick = 0

    def add(self, uuid: str, parent: str | None, kind: str, **extra: Any) -> None:
        self.tick += 1
        rec = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "sessionId": "sess-1",
            "cwd": "/work/project",
            "uuid": uuid,
            "timestamp": f"2026-01-01T00:00:{self.tick:02d}.000Z",
            **extra,
        }
        self.lines.append(orjson.dumps(rec))

    def user(self, uuid: str, parent: str | None, content: Any, **extra: Any) -> None:
        self.add(uuid, parent, "user", message={"role": "user", "content": content}, **extra)

    def assistant(
        self, uuid: str, parent: str | None, mid: str, *blocks: dict, **extra: Any
    ) -> None:
        message = {"id": mid, "role": "assistant", "model": "claude-test", "content": list(blocks)}
        self.add(uuid, parent, "assistant", message=message, **extra)

    def progress(self, uuid: str, parent: str) -> None:
        self.add(
            uuid, parent, "progress", data={"type": "hook_progress", "hookEvent": "PreToolUse"}
        )

    def garbage(self, line: bytes) -> None:
        self.lines.append(line)

    def write(self, path: Path) -> Path:
        path.write_bytes(b"\n".join(self.lines) + b"\n")
        return path


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(tool_id: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}


def tool_result(tool_id: str, content: Any = "ok", **extra: Any) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


def test_compact_boundary_continues_through_logical_parent(tmp_path: Path) -> None:
    t = Transcript()
    t.user("u1", None, "first prompt")
    t.assistant("a1", "u1", "msg_1", text("first answer"))
    t.add(
        "b1",
        None,
        "system",
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a1",
        compactMetadata={"trigger": "manual"},
    )
    summary = "This session is being continued from a previous conversation. Summary: …"
    t.user("u2", "b1", summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    t.user("u3", "u2", "prompt after compaction")
    t.assistant("a3", "u3", "msg_3", text("answer after compaction"))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert texts(session.messages, "user") == ["first prompt", summary, "prompt after compaction"]
    assert texts(session.messages, "assistant") == ["first answer", "answer after compaction"]
    assert [m["id"] for m in session.messages] == ["u1", "msg_1", "u2", "u3", "msg_3"]


def test_progress_records_are_links_not_messages(tmp_path: Path) -> None:
    t = Transcript()
    t.progress("p0", None)
    t.user("u1", "p0", "run ls")
    t.progress("p1", "u1")
    t.assistant("a1", "p1", "msg_1", tool_use("toolu_1"))
    t.progress("p2", "a1")
    t.progress("p3", "p2")
    t.user("r1", "p3", [tool_result("toolu_1", "file.txt")])
    t.progress("p4", "r1")
    t.assistant("a2", "p4", "msg_2", text("there is one file"))
    t.add("s1", "a2", "system", subtype="stop_hook_summary")
    session = load(t.write(tmp_path / "s.jsonl"))
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file.txt"}
    ]
    assert texts(session.messages, "assistant") == ["there is one file"]


def test_newest_branch_wins(tmp_path: Path) -> None:
    t = Transcript()
    t.user("u1", None, "hello")
    t.assistant("a1", "u1", "msg_1", text("hi"))
    t.user("u2", "a1", "original question")
    t.assistant("a2", "u2", "msg_2", text("old answer"))
    # The user rewound to a1 and asked again: a second child of a1, written later.
    t.user("u2b", "a1", "edited question")
    t.assistant("a2b", "u2b", "msg_2b", text("new answer"))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert texts(session.messages, "user") == ["hello", "edited question"]
    assert texts(session.messages, "assistant") == ["hi", "new answer"]


def test_split_reply_with_results_on_side_branches(tmp_path: Path) -> None:
    # Claude Code's shape for parallel calls: each result hangs off the piece that asked for it.
    t = Transcript()
    t.user("u1", None, "look around")
    t.assistant("a1", "u1", "msg_1", {"type": "thinking", "thinking": "", "signature": ""})
    t.assistant("a2", "a1", "msg_1", text("Checking two things."))
    t.assistant("a3", "a2", "msg_1", tool_use("toolu_a"))
    t.progress("p1", "a3")
    t.assistant("a4", "p1", "msg_1", tool_use("toolu_b"))
    t.user("r1", "a3", [tool_result("toolu_a", "A", is_error=True)])  # side branch
    t.user("r2", "a4", [tool_result("toolu_b", [text("B")])])
    t.assistant("a5", "r2", "msg_2", text("done"))
    session = load(t.write(tmp_path / "s.jsonl"))
    reply, results = session.messages[1], session.messages[2]
    assert [b["type"] for b in reply["content"]] == ["text", "tool_use", "tool_use"]
    assert reply["id"] == "msg_1" and reply["model"] == "claude-test"
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": [text("B")]},
    ]
    assert texts(session.messages, "assistant") == ["Checking two things.", "done"]
    assert_tool_pairs(session)


def test_thinking_blocks(tmp_path: Path) -> None:
    signed = {"type": "thinking", "thinking": "Let me think.", "signature": "EsMC+/==sig"}
    t = Transcript()
    t.user("u1", None, "q")
    t.assistant("a1", "u1", "msg_1", {"type": "thinking", "thinking": "", "signature": ""})
    t.assistant("a2", "a1", "msg_1", signed)
    t.assistant("a3", "a2", "msg_1", {"type": "thinking", "thinking": "", "signature": "only-sig"})
    t.assistant("a4", "a3", "msg_1", {"type": "redacted_thinking", "data": "opaque"})
    t.assistant("a5", "a4", "msg_1", text("answer"))
    session = load(t.write(tmp_path / "s.jsonl"))
    blocks = session.messages[1]["content"]
    assert blocks == [
        signed,
        {"type": "thinking", "thinking": "", "signature": "only-sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        text("answer"),
    ]
    assert orjson.dumps(blocks[0]) == orjson.dumps(signed)


def test_garbage_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    t = Transcript()
    t.garbage(b"this is not json")
    t.user("u1", None, "prompt")
    t.garbage(b'{"parentUuid": "u1", "type": "assis')  # torn line
    t.assistant("a1", "u1", "msg_1", text("answer"))
    t.garbage(b"\x00\x00\x00")
    session = load(t.write(tmp_path / "s.jsonl"))
    assert session.skipped_lines == 3
    assert session.warnings
    assert texts(session.messages, "user") == ["prompt"]
    assert texts(session.messages, "assistant") == ["answer"]


def test_local_command_noise_is_skipped_but_prompts_kept(tmp_path: Path) -> None:
    t = Transcript()
    caveat = "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>"
    t.user("u1", None, caveat, isMeta=True)
    t.user(
        "u2",
        "u1",
        "<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>",
    )
    t.user("u3", "u2", "<local-command-stdout>Reconnected.</local-command-stdout>")
    with_args = "<command-name>/review</command-name>\n<command-args>look at auth.py</command-args>"
    t.user("u4", "u3", with_args)
    t.user("u5", "u4", [text("Expanded command prompt: review auth.py")], isMeta=True)
    t.assistant("a1", "u5", "msg_1", text("Reviewing."))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert texts(session.messages, "user") == [with_args, "Expanded command prompt: review auth.py"]


def test_image_blocks_are_kept(tmp_path: Path) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
    }
    t = Transcript()
    t.user("u1", None, [text("what is this?"), image])
    t.assistant("a1", "u1", "msg_1", text("a cat"))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert session.messages[0]["content"] == [text("what is this?"), image]


def test_inline_sidechain_records_are_kept_apart(tmp_path: Path) -> None:
    t = Transcript()
    t.user("u1", None, "delegate this")
    t.assistant(
        "a1",
        "u1",
        "msg_1",
        {
            "type": "tool_use",
            "id": "toolu_task",
            "name": "Task",
            "input": {"description": "Explore", "prompt": "look"},
        },
    )
    t.user("s1", None, "look", isSidechain=True, agentId="ag1")
    t.assistant("s2", "s1", "msg_s", text("found it"), isSidechain=True, agentId="ag1")
    t.user("r1", "a1", [tool_result("toolu_task", "found it")])
    t.assistant("a2", "r1", "msg_2", text("the agent found it"))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert texts(session.messages, "user") == ["delegate this"]
    assert len(session.sidechains) == 1
    side = session.sidechains[0]
    assert side.agent_id == "ag1"
    assert texts(side.messages, "user") == ["look"]
    assert texts(side.messages, "assistant") == ["found it"]


def test_subagents_folder_next_to_the_main_file(tmp_path: Path) -> None:
    main = Transcript()
    main.user("u1", None, "delegate")
    main.assistant("a1", "u1", "msg_1", text("ok"))
    path = main.write(tmp_path / "sess-1.jsonl")
    sub = Transcript()
    sub.user("x1", None, "subtask prompt", isSidechain=True, agentId="a1b2")
    sub.assistant("x2", "x1", "msg_x", text("subtask answer"), isSidechain=True, agentId="a1b2")
    (tmp_path / "sess-1" / "subagents").mkdir(parents=True)
    sub.write(tmp_path / "sess-1" / "subagents" / "agent-a1b2.jsonl")

    session = load(path)
    assert texts(session.messages, "assistant") == ["ok"]
    assert [s.agent_id for s in session.sidechains] == ["a1b2"]
    assert texts(session.sidechains[0].messages, "assistant") == ["subtask answer"]

    # The agent file on its own is a conversation too.
    alone = load(tmp_path / "sess-1" / "subagents" / "agent-a1b2.jsonl")
    assert alone.agent_id == "a1b2"
    assert texts(alone.messages, "user") == ["subtask prompt"]


def test_title_from_summary_record(tmp_path: Path) -> None:
    t = Transcript()
    t.garbage(orjson.dumps({"type": "summary", "summary": "Fix the login bug", "leafUuid": "a1"}))
    t.user("u1", None, "fix login")
    t.assistant("a1", "u1", "msg_1", text("fixed"))
    assert load(t.write(tmp_path / "s.jsonl")).title == "Fix the login bug"


def test_file_without_json_lines_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("just some notes\nnot a transcript\n")
    with pytest.raises(ImportFormatError, match="no JSON"):
        detect_format(path)
    with pytest.raises(ImportFormatError, match="is not a Claude Code transcript"):
        load(path, "claude-code")


# --- synthetic Qwen Code and Gemini CLI files ------------------------------------------------


def qwen_record(uuid: str, parent: str | None, kind: str, **extra: Any) -> bytes:
    rec = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "qwen-sess",
        "timestamp": f"2026-01-02T00:00:{len(uuid):02d}.000Z",
        "type": kind,
        "cwd": "/home/dev/app",
        "version": "0.2.0",
        **extra,
    }
    return orjson.dumps(rec)


def test_qwen_code_recording(tmp_path: Path) -> None:
    lines = [
        qwen_record(
            "q1", None, "user", message={"role": "user", "parts": [{"text": "list files"}]}
        ),
        qwen_record(
            "q2",
            "q1",
            "assistant",
            model="qwen3-coder-plus",
            message={
                "role": "model",
                "parts": [
                    {"thought": True, "text": "I should call ls."},
                    {"text": "Listing."},
                    {"functionCall": {"id": "call_1", "name": "ls", "args": {"path": "."}}},
                    {"functionCall": {"id": "call_2", "name": "read", "args": {"path": "a"}}},
                ],
            },
        ),
        qwen_record(
            "q3",
            "q2",
            "tool_result",
            message={
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_1",
                            "name": "ls",
                            "response": {"output": "a b"},
                        }
                    }
                ],
            },
            toolCallResult={"callId": "call_1", "status": "success"},
        ),
        qwen_record(
            "q4",
            "q3",
            "tool_result",
            message={
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_2",
                            "name": "read",
                            "response": {"error": "denied"},
                        }
                    }
                ],
            },
            toolCallResult={"callId": "call_2", "status": "error"},
        ),
        b"garbage line",
        qwen_record(
            "q5",
            "q4",
            "assistant",
            model="qwen3-coder-plus",
            message={"role": "model", "parts": [{"text": "Two files"}]},
        ),
        # The same uuid again: the rest of that reply, written on its own line.
        qwen_record(
            "q5",
            "q4",
            "assistant",
            model="qwen3-coder-plus",
            message={"role": "model", "parts": [{"text": ", a and b."}]},
        ),
        qwen_record(
            "q6",
            "q5",
            "system",
            subtype="chat_compression",
            systemPayload={
                "info": {},
                "compressedHistory": [
                    {
                        "role": "user",
                        "parts": [{"text": "<state_snapshot>listed files</state_snapshot>"}],
                    },
                    {
                        "role": "model",
                        "parts": [{"text": "Got it. Thanks for the additional context!"}],
                    },
                    {"role": "model", "parts": [{"text": "Two files"}, {"text": ", a and b."}]},
                ],
            },
        ),
        qwen_record(
            "q7",
            "q6",
            "system",
            subtype="custom_title",
            systemPayload={"customTitle": "Listing files"},
        ),
        qwen_record("q8", "q7", "user", message={"role": "user", "parts": [{"text": "thanks"}]}),
    ]
    path = tmp_path / "0f6a2c1e-1111-2222-3333-444455556666.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    assert detect_format(path) == "qwen-code"
    session = load(path)
    assert session.source_id == "qwen-sess"
    assert session.workspace == "/home/dev/app"
    assert session.title == "Listing files"
    assert session.model == "qwen3-coder-plus"
    assert session.skipped_lines == 1
    msgs = session.messages
    assert [m["role"] for m in msgs] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "I should call ls."},
        text("Listing."),
        {"type": "tool_use", "id": "call_1", "name": "ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "a"}},
    ]
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "a b"},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "denied", "is_error": True},
    ]
    assert texts([msgs[3]], "assistant") == ["Two files", ", a and b."]
    assert texts(msgs[4:6], "user") == ["<state_snapshot>listed files</state_snapshot>"]
    assert texts(msgs, "user")[-1] == "thanks"
    assert msgs[0]["id"] == "q1" and msgs[1]["model"] == "qwen3-coder-plus"
    assert_tool_pairs(session)


def test_qwen_code_ids_are_paired_by_name_when_missing(tmp_path: Path) -> None:
    lines = [
        qwen_record("q1", None, "user", message={"role": "user", "parts": [{"text": "go"}]}),
        qwen_record(
            "q2",
            "q1",
            "assistant",
            message={"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        ),
        qwen_record(
            "q3",
            "q2",
            "tool_result",
            message={
                "role": "user",
                "parts": [{"functionResponse": {"name": "ls", "response": {"output": "x"}}}],
            },
        ),
    ]
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\n".join(lines))
    msgs = load(path, "qwen-code").messages
    assert msgs[1]["content"][0]["id"] == msgs[2]["content"][0]["tool_use_id"]


def test_gemini_cli_json_conversation(tmp_path: Path) -> None:
    doc = {
        "sessionId": "gem-1",
        "projectHash": "abc",
        "startTime": "2025-09-01T10:00:00.000Z",
        "lastUpdated": "2025-09-01T10:05:00.000Z",
        "messages": [
            {"id": "m1", "timestamp": "t", "type": "user", "content": "read the readme"},
            {"id": "m0", "timestamp": "t", "type": "info", "content": "Loaded 3 tools"},
            {
                "id": "m2",
                "timestamp": "t",
                "type": "gemini",
                "content": "Reading it.",
                "model": "gemini-2.5-pro",
                "thoughts": [
                    {"subject": "Plan", "description": "Open README.md", "timestamp": "t"}
                ],
                "toolCalls": [
                    {
                        "id": "read-1",
                        "name": "read_file",
                        "args": {"path": "README.md"},
                        "status": "success",
                        "timestamp": "t",
                        "result": [
                            {
                                "functionResponse": {
                                    "id": "read-1",
                                    "name": "read_file",
                                    "response": {"output": "# App"},
                                }
                            }
                        ],
                    },
                    {
                        "id": "shell-1",
                        "name": "shell",
                        "args": {},
                        "status": "cancelled",
                        "timestamp": "t",
                    },
                ],
            },
            {
                "id": "m3",
                "timestamp": "t",
                "type": "gemini",
                "content": [{"text": "It is an app."}],
                "model": "gemini-2.5-pro",
            },
        ],
    }
    path = tmp_path / "session-2025-09-01T10-00-gem1.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    assert detect_format(path) == "qwen-code"
    session = load(path)
    assert session.source_id == "gem-1"
    assert session.created == "2025-09-01T10:00:00.000Z"
    assert session.model == "gemini-2.5-pro"
    msgs = session.messages
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[1]["content"][0] == {"type": "thinking", "thinking": "Plan\n\nOpen README.md"}
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "read-1", "content": "# App"},
        {
            "type": "tool_result",
            "tool_use_id": "shell-1",
            "content": "tool call cancelled",
            "is_error": True,
        },
    ]
    assert texts(msgs, "assistant") == ["Reading it.", "It is an app."]


def test_gemini_cli_checkpoint_list(tmp_path: Path) -> None:
    doc = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
    ]
    path = tmp_path / "checkpoint-tag.json"
    path.write_bytes(orjson.dumps(doc))
    session = load(path)
    assert [(m["role"], m["content"]) for m in session.messages] == [
        ("user", [text("hi")]),
        ("assistant", [text("hello")]),
    ]


def test_gemini_cli_jsonl_with_rewind(tmp_path: Path) -> None:
    lines = [
        {"sessionId": "gem-2", "projectHash": "abc", "startTime": "2026-03-01T00:00:00Z"},
        {"id": "m1", "timestamp": "t", "type": "user", "content": [{"text": "first try"}]},
        {"id": "m2", "timestamp": "t", "type": "gemini", "content": "bad answer"},
        {"$rewindTo": "m1"},
        {"id": "m3", "timestamp": "t", "type": "user", "content": [{"text": "second try"}]},
        {"id": "m4", "timestamp": "t", "type": "gemini", "content": "good answer"},
        {"$set": {"summary": "Two tries"}},
    ]
    path = tmp_path / "session-2026-03-01T00-00-gem2.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    assert detect_format(path) == "qwen-code"
    session = load(path)
    assert session.title == "Two tries"
    assert texts(session.messages, "user") == ["second try"]
    assert texts(session.messages, "assistant") == ["good answer"]


# --- detection and errors ---------------------------------------------------------------------


def test_bundles_are_detected_by_magic(tmp_path: Path) -> None:
    zpath = tmp_path / "export.bin"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("transcript.jsonl", "{}\n")
    tpath = tmp_path / "export.tgz"
    with tarfile.open(tpath, "w:gz") as tf:
        data = b"{}\n"
        info = tarfile.TarInfo("transcript.jsonl")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    assert detect_format(zpath) == "bundle"
    assert detect_format(tpath) == "bundle"
    with pytest.raises(ImportFormatError, match="bundle"):
        load(zpath)


def test_unknown_and_missing_files(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}\n')
    with pytest.raises(ImportFormatError, match="not a transcript format we know"):
        detect_format(other)
    with pytest.raises(ImportFormatError, match="empty"):
        detect_format(_touch(tmp_path / "empty.jsonl"))
    with pytest.raises(ImportFormatError, match="directory"):
        detect_format(tmp_path)
    with pytest.raises(NotFoundError):
        load(tmp_path / "missing.jsonl")
    with pytest.raises(UsageError):
        load(other, "cursor")


def test_error_messages_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "binary.dat"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(ImportFormatError) as info:
        detect_format(path)
    assert "\n" not in str(info.value)


def _touch(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def test_skipped_lines_are_named_with_their_reason(tmp_path: Path) -> None:
    t = Transcript()
    t.user("u1", None, "prompt")
    t.garbage(b"this is not json")
    t.assistant("a1", "u1", "msg_1", text("answer"))
    t.user("u2", "a1", "more")
    path = t.write(tmp_path / "s.jsonl")
    path.write_bytes(path.read_bytes() + b'{"parentUuid": "u2", "type": "assis')  # cut mid-line
    session = load(path)
    assert session.skipped == [
        {"line": 2, "reason": "not valid JSON"},
        {"line": 5, "reason": "cut mid-line at the end of the file"},
    ]
    assert session.updated == "2026-01-01T00:00:03.000Z"  # the newest timestamp read


def test_a_broken_chain_is_reported_as_skipped_history(tmp_path: Path) -> None:
    t = Transcript()
    t.user("u1", None, "lost prompt")
    t.assistant("a1", "gone", "msg_1", text("answer"))
    session = load(t.write(tmp_path / "s.jsonl"))
    assert session.skipped == [
        {"line": None, "reason": "history before missing parent gone is lost"}
    ]
