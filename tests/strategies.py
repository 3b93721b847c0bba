"""Hypothesis strategies for canonical conversations that both providers accept.

``conversations()`` draws a valid conversation: user first, roles alternating,
signed and redacted thinking leading assistant messages, single and parallel
tool calls each answered (results first, in any order) in the next user
message, images, ``id``/``model`` keys, and sometimes a final user message that
got no answer yet.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from workhearth.models.messages import Message

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

texts = st.text(min_size=1, max_size=16).filter(lambda s: s.strip() != "")
base64_text = st.text(alphabet=_B64, min_size=4, max_size=24)

_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
json_values = (
    _scalars
    | st.lists(_scalars, max_size=3)
    | st.dictionaries(st.text(max_size=4), _scalars, max_size=2)
)
tool_inputs = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=3)

text_blocks = st.builds(lambda t: {"type": "text", "text": t}, texts)
image_blocks = st.one_of(
    st.builds(
        lambda data, media: {
            "type": "image",
            "source": {"type": "base64", "media_type": media, "data": data},
        },
        base64_text,
        st.sampled_from(["image/png", "image/jpeg"]),
    ),
    st.builds(
        lambda name: {
            "type": "image",
            "source": {"type": "url", "url": f"https://x.test/{name}.png"},
        },
        st.text(alphabet="abcxyz", min_size=1, max_size=6),
    ),
)
# Signed thinking may have empty text: Claude can omit the thinking and keep the signature.
signed_thinking = st.builds(
    lambda thought, sig: {"type": "thinking", "thinking": thought, "signature": sig},
    texts | st.just(""),
    base64_text,
)
redacted_thinking = st.builds(lambda data: {"type": "redacted_thinking", "data": data}, base64_text)
tool_result_content = st.one_of(
    texts,
    st.lists(st.one_of(text_blocks, image_blocks), min_size=1, max_size=2),
)


@st.composite
def conversations(draw: st.DrawFn, max_rounds: int = 5) -> list[Message]:
    """A valid canonical conversation (a new list of new dicts on every draw)."""
    id_prefix = draw(st.sampled_from(["toolu_", "call_", "fc-"]))
    next_id = 0
    messages: list[Message] = []
    pending: list[str] = []
    rounds = draw(st.integers(1, max_rounds))
    for number in range(rounds):
        messages.append(_user_message(draw, pending, number))
        pending = []
        thinking = draw(st.lists(st.one_of(signed_thinking, redacted_thinking), max_size=2))
        tool_uses = []
        for _ in range(draw(st.integers(0, 3)) if draw(st.booleans()) else 0):
            tool_uses.append(
                {
                    "type": "tool_use",
                    "id": f"{id_prefix}{next_id:03d}",
                    "name": draw(st.sampled_from(["read_file", "shell", "grep", "write_file"])),
                    "input": draw(tool_inputs),
                }
            )
            next_id += 1
        body = draw(st.lists(text_blocks, min_size=0 if tool_uses else 1, max_size=2))
        if tool_uses and body and draw(st.booleans()):
            body = body[:1] + tool_uses + body[1:]  # text after a tool call is allowed too
        else:
            body = body + tool_uses
        assistant: dict[str, Any] = {"role": "assistant", "content": thinking + body}
        if draw(st.booleans()):
            assistant["id"] = f"msg_{number}"
            assistant["model"] = "claude-test"
        messages.append(assistant)  # type: ignore[arg-type]
        pending = [block["id"] for block in tool_uses]
    if pending or draw(st.booleans()):
        messages.append(_user_message(draw, pending, rounds))
    return messages


def _user_message(draw: st.DrawFn, pending: list[str], number: int) -> Message:
    order = draw(st.permutations(pending)) if pending else []
    results: list[dict[str, Any]] = []
    for tool_id in order:
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": draw(tool_result_content),
        }
        if draw(st.booleans()):
            result["is_error"] = draw(st.booleans())
        results.append(result)
    extra = draw(
        st.lists(st.one_of(text_blocks, image_blocks), min_size=0 if results else 1, max_size=2)
    )
    message: dict[str, Any] = {"role": "user", "content": results + extra}
    if draw(st.booleans()):
        message["id"] = f"user_{number}"
    return message  # type: ignore[return-value]
