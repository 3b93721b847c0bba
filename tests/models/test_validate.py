"""Each API rule the validators encode, shown caught on a minimal payload."""

from __future__ import annotations

from typing import Any

import pytest

from workhearth.models.validate import anthropic_problems, openai_problems


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "shell", "input": {"cmd": "ls"}}


def result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


THINK = {"type": "thinking", "thinking": "hm", "signature": "sig"}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def anth(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"system": None, "messages": list(messages)}


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_valid_conversation() -> None:
    payload = anth(
        user(text("hi")),
        assistant(
            THINK, {"type": "redacted_thinking", "data": "eA=="}, text("x"), use("a"), use("b")
        ),
        user(result("b"), result("a"), text("more")),
        assistant(THINK, text("done")),
    )
    assert anthropic_problems(payload) == []
    # Signed thinking with empty text (omitted display) is fine.
    empty_thought = {"type": "thinking", "thinking": "", "signature": "sig"}
    assert anthropic_problems(anth(user(text("hi")), assistant(empty_thought, text("x")))) == []


ANTHROPIC_CASES = [
    ("no messages", anth(), "no messages"),
    ("first is assistant", anth(assistant(text("x"))), "first message"),
    ("roles repeat", anth(user(text("a")), user(text("b"))), "alternate"),
    ("empty content list", anth(user()), "content is empty"),
    ("empty content string", anth({"role": "user", "content": ""}), "content is empty"),
    ("empty text block", anth(user(text(""))), "text block is empty"),
    ("blank text block", anth(user(text("  \n"))), "text block is empty"),
    ("extra message key", anth({"role": "user", "content": [text("a")], "id": "m1"}), "keys"),
    ("extra block key", anth(user({"type": "text", "text": "a", "ts": 3})), "keys"),
    ("bad role", anth({"role": "system", "content": [text("a")]}), "role"),
    ("unknown block", anth(user({"type": "video"})), "unknown block type"),
    (
        "tool_use unanswered",
        anth(user(text("a")), assistant(use("t")), user(text("b"))),
        "has no tool_result",
    ),
    (
        "tool_use answered two messages later",
        anth(user(text("a")), assistant(use("t")), assistant(text("b"))),
        "got no tool_result",
    ),
    ("conversation ends on tool_use", anth(user(text("a")), assistant(use("t"))), "ends on it"),
    (
        "tool_result not first",
        anth(user(text("a")), assistant(use("t")), user(text("b"), result("t"))),
        "must come first",
    ),
    (
        "orphan tool_result",
        anth(user(text("a")), assistant(use("t")), user(result("t"), result("zz"))),
        "answers no tool_use",
    ),
    (
        "tool_result answering an older message",
        anth(
            user(text("a")),
            assistant(use("t")),
            user(result("t")),
            assistant(text("b")),
            user(result("t")),
        ),
        "answers no tool_use",
    ),
    (
        "duplicate tool_result",
        anth(user(text("a")), assistant(use("t")), user(result("t"), result("t"))),
        "second tool_result",
    ),
    (
        "duplicate tool_use id",
        anth(
            user(text("a")),
            assistant(use("t")),
            user(result("t")),
            assistant(use("t")),
            user(result("t")),
        ),
        "not unique",
    ),
    ("thinking in user message", anth(user(THINK)), "not allowed in a user message"),
    ("tool_use in user message", anth(user(use("t"))), "not allowed in a user message"),
    (
        "tool_result in assistant message",
        anth(user(text("a")), assistant(result("t"))),
        "not allowed in an assistant message",
    ),
    (
        "thinking after text",
        anth(user(text("a")), assistant(text("b"), THINK)),
        "must come before text",
    ),
    (
        "redacted thinking after tool_use",
        anth(
            user(text("a")),
            assistant(use("t"), {"type": "redacted_thinking", "data": "x"}),
            user(result("t")),
        ),
        "must come before text",
    ),
    (
        "unsigned thinking",
        anth(user(text("a")), assistant({"type": "thinking", "thinking": "x"}, text("b"))),
        "no signature",
    ),
    (
        "tool_use input not an object",
        anth(
            user(text("a")),
            assistant({"type": "tool_use", "id": "t", "name": "n", "input": "x"}),
            user(result("t")),
        ),
        "input must be an object",
    ),
    (
        "empty text inside tool_result",
        anth(
            user(text("a")),
            assistant(use("t")),
            user({"type": "tool_result", "tool_use_id": "t", "content": [text("")]}),
        ),
        "text block is empty",
    ),
    (
        "image without data",
        anth(
            user(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": ""},
                }
            )
        ),
        "media_type and data",
    ),
]


@pytest.mark.parametrize(
    ("name", "payload", "needle"), ANTHROPIC_CASES, ids=[c[0] for c in ANTHROPIC_CASES]
)
def test_anthropic_rule(name: str, payload: dict[str, Any], needle: str) -> None:
    problems = anthropic_problems(payload)
    assert any(needle in problem for problem in problems), problems


# --------------------------------------------------------------------------- OpenAI


def call(call_id: str, arguments: str = '{"a": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": arguments}}


def ai(content: Any = None, *calls: dict[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


SYS = {"role": "system", "content": "be brief"}
HI = {"role": "user", "content": "hi"}


def test_openai_valid_conversation() -> None:
    messages = [
        SYS,
        HI,
        ai(None, call("a"), call("b")),
        tool("b"),
        tool("a", ""),
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}],
        },
        ai("done"),
    ]
    assert openai_problems(messages) == []


OPENAI_CASES = [
    ("no messages", [], "no messages"),
    ("system not first", [HI, SYS], "only come first"),
    ("first non-system is assistant", [SYS, ai("x")], "first non-system"),
    ("empty user content", [{"role": "user", "content": ""}], "user content is empty"),
    (
        "empty text part",
        [{"role": "user", "content": [{"type": "text", "text": ""}]}],
        "text part is empty",
    ),
    ("assistant with nothing", [HI, ai(None)], "neither content nor tool_calls"),
    ("assistant with empty string", [HI, ai("")], "neither content nor tool_calls"),
    (
        "empty tool_calls list",
        [HI, {"role": "assistant", "content": "x", "tool_calls": []}],
        "non-empty list",
    ),
    ("unanswered tool call at end", [HI, ai(None, call("a"))], "never answered"),
    (
        "missing tool message",
        [HI, ai(None, call("a"), call("b")), tool("a"), HI],
        "need their tool messages",
    ),
    (
        "tool message after user",
        [HI, ai(None, call("a")), HI, tool("a")],
        "need their tool messages",
    ),
    ("orphan tool message", [HI, tool("a")], "does not answer"),
    ("tool message for wrong id", [HI, ai(None, call("a")), tool("b")], "does not answer"),
    (
        "duplicate tool message",
        [HI, ai(None, call("a")), tool("a"), tool("a")],
        "second tool message",
    ),
    (
        "duplicate call id",
        [HI, ai(None, call("a")), tool("a"), ai(None, call("a")), tool("a")],
        "not unique",
    ),
    ("arguments not JSON", [HI, ai(None, call("a", "{oops")), tool("a")], "not valid JSON"),
    ("arguments not an object", [HI, ai(None, call("a", "[1]")), tool("a")], "JSON object"),
    (
        "arguments not a string",
        [
            HI,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": {}}}
                ],
            },
            tool("a"),
        ],
        "must be a JSON string",
    ),
    ("unknown role", [HI, {"role": "wizard", "content": "x"}], "unknown role"),
]


@pytest.mark.parametrize(
    ("name", "messages", "needle"), OPENAI_CASES, ids=[c[0] for c in OPENAI_CASES]
)
def test_openai_rule(name: str, messages: list[dict[str, Any]], needle: str) -> None:
    problems = openai_problems(messages)
    assert any(needle in problem for problem in problems), problems
