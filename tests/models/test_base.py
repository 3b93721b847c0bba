"""The one model contract: ``stream(request)`` and ``close()`` on :class:`ChatModel`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workhearth.models.base import ChatModel, ModelRequest
from workhearth.models.messages import text_message
from workhearth.models.streaming import Completion, Done, StreamEvent, TextDelta, Usage


class Echo(ChatModel):
    """A model at the network edge that answers with what it was asked."""

    name = "echo:test"

    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []
        self.closed = False

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.seen.append(request)
        text = f"{request.system}|{request.max_tokens}|{len(request.tools or ())}"
        yield TextDelta(text)
        yield Done(Completion(text_message("assistant", text), Usage(), "end_turn", self.name))

    def close(self) -> None:
        self.closed = True


def test_a_model_must_say_how_it_streams() -> None:
    class Silent(ChatModel):
        name = "silent:test"

    with pytest.raises(TypeError, match="stream"):
        Silent()  # type: ignore[abstract]


def test_generate_and_complete_are_the_stream_consumed() -> None:
    model = Echo()
    ask = [text_message("user", "hi")]
    request = ModelRequest("sys", ask, tools=[{"name": "t", "parameters": {}}], max_tokens=7)
    assert model.generate(request).message["content"][0]["text"] == "sys|7|1"
    assert model.seen[-1] is request
    reply = model.complete(None, ask, max_tokens=3)
    assert reply["content"][0]["text"] == "None|3|0"
    assert model.seen[-1] == ModelRequest(None, ask, max_tokens=3)
    model.close()
    assert model.closed


def test_a_stream_without_done_is_a_cut_stream() -> None:
    class Cut(Echo):
        def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
            yield TextDelta("half")

    from workhearth.errors import ModelError

    with pytest.raises(ModelError, match="without a result"):
        Cut().generate(ModelRequest(None, []))
