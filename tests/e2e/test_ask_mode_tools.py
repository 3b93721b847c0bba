"""Issue #18 item 10 through the real ``hearth run --mode ask``: when the model calls a
tool it was not given, the error names exactly the tools it was given."""

from __future__ import annotations

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401  (fixtures)
    WRITE_TOOLS,
    agent_for,
    api,
    assert_valid_requests,
    calls_reply,
    text_reply,
    tool_names,
    tool_results,
)


def test_ask_mode_errors_name_only_the_tools_offered(hearth: Hearth, agent_for, api: str) -> None:  # noqa: F811
    replies = [
        calls_reply(
            api,
            ("call_w", "write_file", {"path": "new.txt", "content": "no"}),
            ("call_s", "shell", {"command": "touch made.txt"}),
            ("call_u", "frobnicate", {"what": "everything"}),
        ),
        text_reply(api, "I can only read in ask mode."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "make new.txt", "--mode", "ask", "--yes")

    assert result.code == 0, result.err
    assert_valid_requests(api, agent.fake)
    offered = tool_names(agent.fake.bodies[0])
    assert offered and not offered & WRITE_TOOLS
    results = tool_results(api, agent.fake.bodies[1])
    for call_id in ("call_w", "call_s", "call_u"):
        text, is_error = results[call_id]
        assert is_error in (True, None), text
        listed = text.split("available: ", 1)[1].split("\n")[0].split(", ")
        assert set(listed) == offered, (call_id, text)
    assert not (hearth.workspace / "new.txt").exists()
    assert not (hearth.workspace / "made.txt").exists()
