"""The bytes each provider sends stay exactly what they were.

``request_bodies.json`` holds the bodies the local protocol servers received
from the providers before the model contract took one request object; every
case is sent again and must arrive byte for byte the same.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_providers import (
    FakeProvider,
    Reply,
    anthropic_message,
    anthropic_text_block,
    openai_sse,
    openai_text,
)
from tests.models.test_providers import FAST, TOOLS, anthropic_model, openai_model
from workhearth.models.base import ModelRequest
from workhearth.models.messages import Message
from workhearth.models.router import Router
from workhearth.models.streaming import Done

GOLDEN = Path(__file__).with_name("request_bodies.json")

CONVERSATION: list[Message] = [
    {"role": "user", "content": [{"type": "text", "text": "看一下 src 目录"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "list it", "signature": "c2ln"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "call_1", "name": "list_dir", "input": {"path": "src"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "a.py\nb.py"},
            {"type": "text", "text": 'and "quotes" \\ too'},
        ],
    },
]
ASK: list[Message] = CONVERSATION[:1]

# name: (provider, settings, system, messages, keyword arguments)
CASES: dict[str, tuple[str, dict[str, Any], str | None, list[Message], dict[str, Any]]] = {
    "openai-full": ("openai", {}, "You are hearth.", CONVERSATION, {"tools": TOOLS}),
    "openai-bare": ("openai", {}, None, ASK, {}),
    "openai-max-tokens": ("openai", {}, "S", ASK, {"max_tokens": 64, "tools": []}),
    "openai-reasoning": ("openai", {"model": "o3-mini"}, "S", ASK, {"max_tokens": 99}),
    "openai-settings-limit": ("openai", {"max_tokens": 512}, "S", CONVERSATION, {}),
    "anthropic-full": ("anthropic", {}, "You are hearth.", CONVERSATION, {"tools": TOOLS}),
    "anthropic-bare": ("anthropic", {}, None, ASK, {}),
    "anthropic-max-tokens": ("anthropic", {}, "S", ASK, {"max_tokens": 64, "tools": []}),
    "anthropic-thinking": ("anthropic", {"thinking_budget": 2048}, "S", CONVERSATION, {}),
}


def received(name: str, *, routed: bool = False) -> str:
    """The body the server received for case ``name``, as text."""
    provider, settings, system, messages, kw = CASES[name]
    if provider == "openai":
        reply = Reply(pieces=openai_sse(openai_text(["ok"])))
    else:
        reply = Reply(pieces=anthropic_message(anthropic_text_block(0, ["ok"])))
    with FakeProvider([reply]) as server:
        model = (openai_model if provider == "openai" else anthropic_model)(server, FAST)
        model.settings = dataclasses.replace(model.settings, **settings)
        if routed:
            # Why: the agent talks to the router, which hands the same request on.
            model = Router([model])
        try:
            events = list(model.stream(ModelRequest(system, messages, **kw)))
        finally:
            model.close()
    assert isinstance(events[-1], Done)
    (request,) = server.received
    return request.raw.decode("utf-8")


@pytest.mark.parametrize("routed", [False, True], ids=["direct", "routed"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_request_body_is_byte_identical(name: str, routed: bool) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert received(name, routed=routed) == golden[name]
