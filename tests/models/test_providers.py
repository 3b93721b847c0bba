"""The OpenAI-compatible and Anthropic providers against local servers that speak
each API's real streaming protocol (tests/fake_providers.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.fake_providers import (
    FakeProvider,
    Reply,
    anthropic_message,
    anthropic_sse,
    anthropic_start,
    anthropic_text_block,
    anthropic_thinking_block,
    anthropic_tool_block,
    json_reply,
    openai_chunk,
    openai_sse,
    openai_text,
    openai_tool_calls,
    split,
)
from workhearth.config import ModelSettings
from workhearth.errors import HearthError, ModelError
from workhearth.models.anthropic_provider import AnthropicChatModel
from workhearth.models.base import ModelRequest
from workhearth.models.http import HttpOptions
from workhearth.models.messages import Message
from workhearth.models.openai_provider import OpenAIChatModel
from workhearth.models.streaming import (
    Done,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSpec,
)
from workhearth.models.validate import anthropic_problems, openai_problems

FAST = HttpOptions(timeout=2.0, max_retries=2, backoff_base=0.01, backoff_max=0.05)
SYSTEM = "You are hearth."
ASK: list[Message] = [{"role": "user", "content": [{"type": "text", "text": "看一下 src 目录"}]}]
TOOLS = [
    ToolSpec(
        "read_file",
        "Read a file",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    {"name": "list_dir", "description": "List a folder", "parameters": {"type": "object"}},
]


def openai_model(server: FakeProvider, options: HttpOptions = FAST, **kw: Any) -> OpenAIChatModel:
    settings = ModelSettings(
        name="qwen",
        provider="openai",
        model="qwen-plus",
        base_url=server.url + "/v1",
        api_key_env="DASHSCOPE_API_KEY",
        api_key=kw.pop("api_key", "sk-test"),
        **kw,
    )
    return OpenAIChatModel(settings, options)


def anthropic_model(server: FakeProvider, options: HttpOptions = FAST, **kw: Any):
    settings = ModelSettings(
        name="claude",
        provider="anthropic",
        model="claude-sonnet-4-5",
        base_url=kw.pop("base_url", server.url),
        api_key_env="ANTHROPIC_API_KEY",
        api_key="sk-ant-test",
        **kw,
    )
    return AnthropicChatModel(settings, options)


def collect(model: Any, messages: list[Message] = ASK, **kw: Any):
    events = list(model.stream(ModelRequest(SYSTEM, messages, **kw)))
    assert isinstance(events[-1], Done)
    return events, events[-1].completion


def check_openai_request(body: dict[str, Any]) -> None:
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert openai_problems(body["messages"]) == []


def check_anthropic_request(body: dict[str, Any]) -> None:
    assert body["stream"] is True and body["max_tokens"] > 0
    payload = {"system": body.get("system"), "messages": body["messages"]}
    assert anthropic_problems(payload) == []


# --------------------------------------------------------------------------- OpenAI


def test_openai_plain_text_split_mid_character() -> None:
    pieces = ["你好", "，src 里有 ", "3 个文件。"]
    stream = split(openai_sse(openai_text(pieces)), 7, pause=0.001)
    with FakeProvider([Reply(pieces=stream)]) as server:
        events, done = collect(openai_model(server))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "".join(pieces)
    assert done.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "你好，src 里有 3 个文件。"}],
        "model": "qwen-plus",
    }
    assert done.stop_reason == "end_turn" and done.model == "qwen"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (31, 9)
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert request.body["model"] == "qwen-plus"
    check_openai_request(request.body)


def test_openai_tool_call_arguments_fragmented() -> None:
    fragments = ['{"pa', 'th": "sr', "c/main", '.py"}']
    with FakeProvider(
        [Reply(pieces=openai_sse(openai_tool_calls([("call_1", "read_file", fragments)])))]
    ) as server:
        events, done = collect(openai_model(server), tools=TOOLS)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ToolCallStarted", "ToolCallFinished", "Done"]
    block = {
        "type": "tool_use",
        "id": "call_1",
        "name": "read_file",
        "input": {"path": "src/main.py"},
    }
    assert events[1] == ToolCallFinished(block)  # type: ignore[arg-type]
    assert done.message["content"] == [block]
    assert done.stop_reason == "tool_use" and done.tool_calls == [block]
    tools = server.received[0].body["tools"]
    assert tools[0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": TOOLS[0].parameters,  # type: ignore[union-attr]
        },
    }
    assert tools[1]["function"]["name"] == "list_dir"


def test_openai_parallel_tool_calls_round_trip() -> None:
    calls = [
        ("call_a", "read_file", ['{"path":', ' "a.py"}']),
        ("call_b", "list_dir", ["{", '"path": "', 'src"', "}"]),
    ]
    replies = [
        Reply(pieces=openai_sse(openai_tool_calls(calls))),
        Reply(pieces=openai_sse(openai_text(["Done."]))),
    ]
    with FakeProvider(replies) as server:
        model = openai_model(server)
        _, first = collect(model, tools=TOOLS)
        assert [b["input"] for b in first.tool_calls] == [{"path": "a.py"}, {"path": "src"}]
        results: Message = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "print(1)"},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "a.py"},
            ],
        }
        _, second = collect(model, [*ASK, first.message, results], tools=TOOLS)
    assert second.message["content"] == [{"type": "text", "text": "Done."}]
    sent = server.received[1].body["messages"]
    check_openai_request(server.received[1].body)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_a", "call_b"]


def test_openai_reasoning_content_becomes_thinking() -> None:
    chunks = openai_text(["42"], reasoning=["Let me ", "think."])
    with FakeProvider(
        [Reply(pieces=openai_sse(chunks)), Reply(pieces=openai_sse(openai_text(["ok"])))]
    ) as server:
        model = openai_model(server)
        events, done = collect(model)
        assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Let me ", "think."]
        assert done.message["content"] == [
            {"type": "thinking", "thinking": "Let me think."},
            {"type": "text", "text": "42"},
        ]
        follow_up: Message = {"role": "user", "content": [{"type": "text", "text": "why?"}]}
        collect(model, [*ASK, done.message, follow_up])
    check_openai_request(server.received[1].body)
    assert "reasoning_content" not in json.dumps(server.received[1].body)


def test_openai_tool_call_without_id_and_repeated_name() -> None:
    # Some local servers send no id and repeat the name in every fragment.
    chunks = [
        openai_chunk({"role": "assistant", "content": None}),
        openai_chunk(
            {"tool_calls": [{"index": 0, "function": {"name": "glob", "arguments": '{"pattern"'}}]}
        ),
        openai_chunk(
            {"tool_calls": [{"index": 0, "function": {"name": "glob", "arguments": ': "*.py"}'}}]}
        ),
        openai_chunk({}, "stop"),
    ]
    with FakeProvider([Reply(pieces=openai_sse(chunks))]) as server:
        events, done = collect(openai_model(server))
    (call,) = done.tool_calls
    assert call["name"] == "glob" and call["input"] == {"pattern": "*.py"}
    assert call["id"].startswith("call_")
    assert events[0] == ToolCallStarted(call["id"], "glob")
    assert done.stop_reason == "tool_use"


def test_openai_429_honours_retry_after() -> None:
    replies = [
        json_reply(429, {"error": {"message": "Rate limit reached"}}, **{"retry-after": "0.3"}),
        Reply(pieces=openai_sse(openai_text(["ok"]))),
    ]
    with FakeProvider(replies) as server:
        started = time.monotonic()
        _, done = collect(openai_model(server))
        elapsed = time.monotonic() - started
    assert done.message["content"] == [{"type": "text", "text": "ok"}]
    assert len(server.received) == 2 and elapsed >= 0.3
    assert server.received[0].body == server.received[1].body


def test_openai_500_twice_then_success() -> None:
    error = json_reply(500, {"error": {"message": "internal"}})
    with FakeProvider([error, error, Reply(pieces=openai_sse(openai_text(["fine"])))]) as server:
        _, done = collect(openai_model(server))
    assert done.message["content"][0] == {"type": "text", "text": "fine"}
    assert len(server.received) == 3


def test_openai_server_errors_until_retries_run_out() -> None:
    error = json_reply(503, {"error": {"message": "upstream overloaded"}})
    with FakeProvider([error] * 3) as server, pytest.raises(ModelError) as info:
        collect(openai_model(server))
    assert len(server.received) == 3 and server.unscripted == 0
    assert str(info.value) == "qwen: gave up after 3 attempts: HTTP 503: upstream overloaded"
    assert info.value.kind == "server"


@pytest.mark.parametrize(
    ("key", "hint"),
    [("sk-test", "check DASHSCOPE_API_KEY"), (None, "DASHSCOPE_API_KEY is not set")],
)
def test_openai_401_is_clear_and_not_retried(key: str | None, hint: str) -> None:
    with FakeProvider([json_reply(401, {"error": {"message": "Incorrect API key"}})]) as server:
        with pytest.raises(ModelError) as info:
            collect(openai_model(server, api_key=key))
    assert len(server.received) == 1
    assert info.value.kind == "auth" and isinstance(info.value, HearthError)
    assert hint in str(info.value) and "\n" not in str(info.value)
    assert ("authorization" in server.received[0].headers) == bool(key)


@pytest.mark.parametrize(
    ("status", "message"),
    [(404, "The model `qwen-plus` does not exist"), (400, "Model not exist.")],
)
def test_openai_unknown_model(status: int, message: str) -> None:
    with FakeProvider([json_reply(status, {"error": {"message": message}})]) as server:
        with pytest.raises(ModelError, match="model 'qwen-plus' not found") as info:
            collect(openai_model(server))
    assert info.value.kind == "not_found" and len(server.received) == 1


@pytest.mark.parametrize("cut", [True, False], ids=["connection-dropped", "no-finish-no-done"])
def test_openai_stream_broken_before_any_output_is_retried(cut: bool) -> None:
    # Dropped mid-body, or a clean end of body with no finish_reason and no [DONE].
    head = openai_sse([openai_chunk({"role": "assistant", "content": ""})], done=False)
    replies = [Reply(pieces=head, cut=cut), Reply(pieces=openai_sse(openai_text(["again"])))]
    with FakeProvider(replies) as server:
        _, done = collect(openai_model(server))
    assert done.message["content"] == [{"type": "text", "text": "again"}]
    assert len(server.received) == 2


def test_openai_stream_cut_after_text_raises() -> None:
    chunks = openai_text(["half ", "of it"])[:2]
    with FakeProvider([Reply(pieces=openai_sse(chunks, done=False), cut=True)]) as server:
        seen: list[Any] = []
        with pytest.raises(ModelError, match="cut off midway") as info:
            seen.extend(openai_model(server).stream(ModelRequest(SYSTEM, ASK)))
    assert seen == [TextDelta("half ")]
    assert info.value.kind == "stream_cut" and len(server.received) == 1


def test_openai_timeout_then_success() -> None:
    options = HttpOptions(timeout=0.2, max_retries=1, backoff_base=0.01)
    replies = [Reply(delay=1.0), Reply(pieces=openai_sse(openai_text(["late but fine"])))]
    with FakeProvider(replies) as server:
        _, done = collect(openai_model(server, options))
    assert done.message["content"][0]["text"] == "late but fine"  # type: ignore[typeddict-item]
    assert len(server.received) == 2


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_deadline_cuts_a_stalled_server_short(api: str) -> None:
    options = HttpOptions(timeout=30.0, max_retries=3, backoff_base=0.01)
    stalled = Reply(delay=3.0)  # would answer after 3 s, well within the 30 s read timeout
    with FakeProvider([stalled] * 4) as server:
        model = (
            openai_model(server, options) if api == "openai" else anthropic_model(server, options)
        )
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            collect(model, deadline=started + 0.5)
        elapsed = time.monotonic() - started
        assert 1 <= len(server.received) <= 2
    assert elapsed < 2.0
    assert info.value.kind == "deadline"


def test_a_deadline_is_not_slept_past_for_a_retry() -> None:
    busy = json_reply(503, {"error": {"message": "busy"}}, **{"retry-after": "20"})
    with FakeProvider([busy, busy]) as server:
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            collect(openai_model(server, FAST), deadline=started + 2.0)
        assert len(server.received) == 1
    assert time.monotonic() - started < 1.5  # it did not wait 20 s to fail later
    assert info.value.kind == "deadline" and "busy" in str(info.value)


def test_openai_timeout_gives_up() -> None:
    options = HttpOptions(timeout=0.2, max_retries=1, backoff_base=0.01)
    stalled = Reply(pieces=[openai_sse([openai_chunk({"role": "assistant"})], done=False)[0], 1.0])
    with FakeProvider([stalled, stalled]) as server, pytest.raises(ModelError) as info:
        started = time.monotonic()
        collect(openai_model(server, options))
    assert time.monotonic() - started < 1.5
    assert info.value.kind == "timeout" and "gave up after 2 attempts" in str(info.value)


def test_openai_error_inside_the_stream() -> None:
    chunk = {"error": {"message": "content moderation", "code": "data_inspection_failed"}}
    with FakeProvider([Reply(pieces=openai_sse([chunk], done=False))]) as server:
        with pytest.raises(ModelError, match="content moderation"):
            collect(openai_model(server))


def test_openai_connection_refused_is_retried_then_clear() -> None:
    server = FakeProvider([])
    url = server.url
    server._server.server_close()  # nothing listens there any more
    model = openai_model(server)
    with pytest.raises(ModelError, match="gave up after 3 attempts") as info:
        model.complete(SYSTEM, ASK)
    assert info.value.kind == "connection" and url in model.settings.base_url


def test_openai_complete_and_max_tokens() -> None:
    with FakeProvider([Reply(pieces=openai_sse(openai_text(["hi"])))]) as server:
        message = openai_model(server).complete(SYSTEM, ASK, max_tokens=64)
    assert message["content"] == [{"type": "text", "text": "hi"}]
    assert server.received[0].body["max_tokens"] == 64 and "tools" not in server.received[0].body


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_plain_text() -> None:
    stream = split(anthropic_message(anthropic_text_block(0, ["Hello", "，世界"])), 11)
    with FakeProvider([Reply(pieces=stream)]) as server:
        events, done = collect(anthropic_model(server))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", "，世界"]
    assert done.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello，世界"}],
        "model": "claude-sonnet-4-5",
    }
    assert done.stop_reason == "end_turn" and done.model == "claude"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (42, 17)
    (request,) = server.received
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["system"] == SYSTEM and request.body["model"] == "claude-sonnet-4-5"
    check_anthropic_request(request.body)


def test_anthropic_thinking_signature_and_tool_use_round_trip() -> None:
    signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+fake+signature=="
    first = anthropic_message(
        anthropic_thinking_block(0, ["The user wants ", "the files."], signature),
        anthropic_text_block(1, ["Looking."]),
        anthropic_tool_block(2, "toolu_01A", "list_dir", ['{"pa', 'th": ', '"src"}']),
        stop_reason="tool_use",
    )
    second = anthropic_message(anthropic_text_block(0, ["Three files."]))
    with FakeProvider([Reply(pieces=first), Reply(pieces=second)]) as server:
        model = anthropic_model(server, thinking_budget=2048)
        events, done = collect(model, tools=TOOLS)
        assert [type(e).__name__ for e in events] == [
            "ThinkingDelta",
            "ThinkingDelta",
            "TextDelta",
            "ToolCallStarted",
            "ToolCallFinished",
            "Done",
        ]
        tool = {"type": "tool_use", "id": "toolu_01A", "name": "list_dir", "input": {"path": "src"}}
        assert done.message["content"] == [
            {"type": "thinking", "thinking": "The user wants the files.", "signature": signature},
            {"type": "text", "text": "Looking."},
            tool,
        ]
        assert done.stop_reason == "tool_use"
        result: Message = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "a.py"}],
        }
        collect(model, [*ASK, done.message, result], tools=TOOLS)
    body = server.received[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    assert body["tools"][0] == {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": TOOLS[0].parameters,  # type: ignore[union-attr]
    }
    resent = server.received[1].body
    check_anthropic_request(resent)
    assert resent["messages"][1]["content"][0]["signature"] == signature


def test_anthropic_parallel_tool_calls() -> None:
    stream = anthropic_message(
        anthropic_tool_block(0, "toolu_1", "read_file", ['{"path": "a', '.py"}']),
        anthropic_tool_block(1, "toolu_2", "read_file", ['{"path": "b.py"}']),
        stop_reason="tool_use",
    )
    with FakeProvider([Reply(pieces=stream)]) as server:
        events, done = collect(anthropic_model(server))
    assert [e.block["input"] for e in events if isinstance(e, ToolCallFinished)] == [
        {"path": "a.py"},
        {"path": "b.py"},
    ]
    assert [b["id"] for b in done.tool_calls] == ["toolu_1", "toolu_2"]


def test_anthropic_overloaded_then_success() -> None:
    overloaded = json_reply(
        529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    ok = Reply(pieces=anthropic_message(anthropic_text_block(0, ["ok"])))
    with FakeProvider([overloaded, ok]) as server:
        _, done = collect(anthropic_model(server))
    assert done.message["content"] == [{"type": "text", "text": "ok"}]
    assert len(server.received) == 2


def test_anthropic_error_event_before_output_is_retried() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    broken = anthropic_sse([anthropic_start(), {"type": "ping"}, error])
    ok = anthropic_message(anthropic_text_block(0, ["second try"]))
    with FakeProvider([Reply(pieces=broken), Reply(pieces=ok)]) as server:
        _, done = collect(anthropic_model(server))
    assert done.message["content"] == [{"type": "text", "text": "second try"}]


def test_anthropic_stream_cut_after_text_raises() -> None:
    events = [anthropic_start(), *anthropic_text_block(0, ["partial"])[:2]]
    with FakeProvider([Reply(pieces=anthropic_sse(events), cut=True)]) as server:
        with pytest.raises(ModelError, match="cut off midway"):
            collect(anthropic_model(server))
    assert len(server.received) == 1


def test_anthropic_401_names_the_key() -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    with FakeProvider([json_reply(401, body)]) as server:
        with pytest.raises(ModelError, match="check ANTHROPIC_API_KEY"):
            collect(anthropic_model(server))
    assert len(server.received) == 1


def test_anthropic_base_url_with_v1_suffix() -> None:
    with FakeProvider([Reply(pieces=anthropic_message(anthropic_text_block(0, ["hi"])))]) as server:
        collect(anthropic_model(server, base_url=server.url + "/v1/"))
    assert server.received[0].path == "/v1/messages"
