from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings

from tests.strategies import conversations
from workhearth.errors import ImportFormatError
from workhearth.models.adapters import from_openai, to_anthropic, to_openai
from workhearth.models.validate import anthropic_problems, openai_problems

SIGNED = {"type": "thinking", "thinking": "let me see", "signature": "c2lnbmF0dXJl"}

CONVERSATION = [
    {"role": "user", "content": [{"type": "text", "text": "list the files"}], "id": "u1"},
    {
        "role": "assistant",
        "id": "a1",
        "model": "claude-x",
        "content": [
            SIGNED,
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {"path": "."}},
            {"type": "tool_use", "id": "t2", "name": "glob", "input": {"pattern": "*.py"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "a.py"}],
                "is_error": False,
            },
            {"type": "text", "text": "and then?"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
]


def test_openai_shape() -> None:
    out = to_openai("be brief", CONVERSATION)
    assert [m["role"] for m in out] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert out[0] == {"role": "system", "content": "be brief"}
    assert out[1] == {"role": "user", "content": "list the files"}
    assistant = out[2]
    assert assistant["content"] == "Looking."
    assert "reasoning_content" not in assistant
    assert [c["id"] for c in assistant["tool_calls"]] == ["t1", "t2"]
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {"pattern": "*.py"}
    assert out[3] == {"role": "tool", "tool_call_id": "t1", "content": "a.py\nb.py"}
    assert out[4] == {"role": "tool", "tool_call_id": "t2", "content": "a.py"}
    assert out[5] == {"role": "user", "content": "and then?"}
    assert openai_problems(out) == []


def test_openai_tool_calls_only_has_null_content() -> None:
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    ]
    out = to_openai(None, msgs)
    assert out[1]["content"] is None
    assert out[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert [m["role"] for m in out] == ["user", "assistant", "tool"]


def test_openai_drops_thinking_only_assistant() -> None:
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [SIGNED, {"type": "redacted_thinking", "data": "eA=="}]},
    ]
    assert to_openai(None, msgs) == [{"role": "user", "content": "hi"}]


def test_openai_images() -> None:
    msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                },
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
            ],
        }
    ]
    (user,) = to_openai(None, msgs)
    assert user["content"] == [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
    ]


def test_openai_tool_result_images_follow_in_user_message() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://x.test/s.png"}}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "shot"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "s", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [{"type": "text", "text": "done"}, image],
                }
            ],
        },
    ]
    out = to_openai(None, msgs)
    assert out[2] == {"role": "tool", "tool_call_id": "t", "content": "done"}
    assert out[3]["role"] == "user"
    assert out[3]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://x.test/s.png"},
    }
    assert openai_problems(out) == []


def test_anthropic_shape_strips_our_keys_and_keeps_signed_thinking() -> None:
    payload = to_anthropic("be brief", CONVERSATION)
    assert payload["system"] == "be brief"
    assert all(set(m) == {"role", "content"} for m in payload["messages"])
    first = payload["messages"][1]["content"][0]
    assert first is SIGNED  # passed through untouched, byte for byte
    assert anthropic_problems(payload) == []
    assert to_anthropic("", CONVERSATION)["system"] is None


def test_anthropic_drops_unsigned_thinking_and_extra_block_keys() -> None:
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "hi", "ts": 1}]},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "yo"}],
        },
    ]
    payload = to_anthropic(None, msgs)
    assert payload["messages"][0]["content"] == [{"type": "text", "text": "hi"}]
    assert payload["messages"][1]["content"] == [{"type": "text", "text": "yo"}]
    assert msgs[0]["content"][0]["ts"] == 1  # input untouched
    assert anthropic_problems(payload) == []


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_generated_conversations_adapt_to_valid_payloads(conv: list) -> None:
    before = copy.deepcopy(conv)
    anthropic = to_anthropic("system", conv)
    openai = to_openai("system", conv)
    assert anthropic_problems(anthropic) == []
    assert openai_problems(openai) == []
    assert conv == before
    # Signed thinking leads its message and reaches Anthropic as the same object.
    for src, dst in zip(conv, anthropic["messages"], strict=True):
        leading = [b for b in src["content"] if b["type"] in ("thinking", "redacted_thinking")]
        assert all(a is b for a, b in zip(leading, dst["content"][: len(leading)], strict=True))


@settings(max_examples=100, deadline=None)
@given(conversations())
def test_openai_round_trip_keeps_calls_and_results(conv: list) -> None:
    system, back = from_openai(to_openai("sys", conv))
    assert system == "sys"
    assert openai_problems(to_openai(system, back)) == []
    calls = [b["id"] for m in conv for b in m["content"] if b["type"] == "tool_use"]
    assert [b["id"] for m in back for b in m["content"] if b["type"] == "tool_use"] == calls
    inputs = [b["input"] for m in conv for b in m["content"] if b["type"] == "tool_use"]
    assert [b["input"] for m in back for b in m["content"] if b["type"] == "tool_use"] == inputs


def test_from_openai() -> None:
    system, msgs = from_openai(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "think",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "g", "arguments": "not json"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "two"}]},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ=="}}
                ],
            },
        ]
    )
    assert system == "sys"
    assert msgs[0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "think"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
        {"type": "tool_use", "id": "c2", "name": "g", "input": {"arguments": "not json"}},
    ]
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "one"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "two"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ=="}},
    ]
    assert len(msgs) == 3


def test_from_openai_rejects_unknown_roles() -> None:
    with pytest.raises(ImportFormatError):
        from_openai([{"role": "function", "content": "x"}])
