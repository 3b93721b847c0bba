"""The shipped scripted model (models/scripted.py): streams its script, fails on misuse."""

from __future__ import annotations

import pytest

from workhearth.errors import ModelError
from workhearth.models.base import ModelRequest
from workhearth.models.messages import text_message
from workhearth.models.scripted import ScriptedModel, calling
from workhearth.models.streaming import Done, TextDelta, ToolCallFinished, ToolCallStarted


def test_it_streams_text_and_tool_calls_then_done() -> None:
    model = ScriptedModel([calling(("list_dir", {"path": "."}), text="Looking.")])
    events = list(model.stream(ModelRequest("sys", [text_message("user", "look")], tools=[])))

    assert [type(e) for e in events] == [TextDelta, ToolCallStarted, ToolCallFinished, Done]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.completion.stop_reason == "tool_use"
    assert [c["name"] for c in done.completion.tool_calls] == ["list_dir"]
    assert model.requests[0].text == "look"


def test_text_steps_callables_and_errors_answer_in_order() -> None:
    model = ScriptedModel(
        ["first", lambda system, messages: f"saw {len(messages)}", ModelError("down")]
    )
    assert model.generate(ModelRequest(None, [text_message("user", "a")])).stop_reason == "end_turn"
    assert model.complete(None, [text_message("user", "b")])["content"][0]["text"] == "saw 1"
    with pytest.raises(ModelError, match="down"):
        model.complete(None, [])
    model.assert_done()


def test_extra_calls_and_unused_steps_fail() -> None:
    with pytest.raises(AssertionError, match="only 0 replies"):
        ScriptedModel([]).complete(None, [])
    with pytest.raises(AssertionError, match="1 scripted step"):
        ScriptedModel(["unused"]).assert_done()
