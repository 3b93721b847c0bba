"""A command that exits non-zero or dies by a signal is a failed call everywhere (issue #18, 1).

The real ``hearth run`` against a scripted provider: the terminal's progress line, the
audit, the model's tool_result and the transcript all say "failed" with the exit code and
the first line of stderr, while the task itself ends ``done`` (a failed call is not a
failed task: a grep that finds nothing exits 1).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (
    APIS,
    Agent,
    assert_valid_requests,
    calls_reply,
    text_reply,
    tool_results,
    write_config,
)
from tests.fake_providers import FakeProvider, Reply

MakeAgent = Callable[[str, list[Reply]], Agent]

USAGE = "usage: split.py FILE -o DIR"
FAILING = f"printf '{USAGE}\\nsee --help\\n' >&2; echo half-done; exit 2"
NOT_FOUND = "grep -q no-such-words notes.txt"
SIGNALLED = "echo before; kill -TERM $$"
SUCCEEDING = "echo all good"


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def agent_for(hearth: Hearth, serve: Callable[[list[Reply]], FakeProvider]) -> MakeAgent:
    write_config(hearth)
    return lambda api, replies: Agent(hearth, api, serve(replies))


def _script(api: str) -> list[Reply]:
    return [
        calls_reply(api, ("call_f1", "shell", {"command": FAILING})),
        calls_reply(api, ("call_f2", "shell", {"command": NOT_FOUND})),
        calls_reply(api, ("call_f3", "shell", {"command": SIGNALLED})),
        calls_reply(api, ("call_f4", "shell", {"command": SUCCEEDING})),
        text_reply(api, "Three of four commands failed."),
    ]


def test_a_failing_command_is_reported_as_failed(
    hearth: Hearth, agent_for: MakeAgent, api: str
) -> None:
    (hearth.workspace / "notes.txt").write_text("nothing to see\n")
    agent = agent_for(api, _script(api))
    result = agent.run("run", "split the file", "--mode", "agent", "--yes")

    # The task is done: only its tool calls failed.
    assert result.code == 0, result.err
    assert "Three of four commands failed." in result.out
    assert_valid_requests(api, agent.fake)

    # The terminal: one line per call, "error" with the exit code and stderr's first line.
    progress = [line for line in result.out.splitlines() if line.startswith("[shell ")]
    assert len(progress) == 4, result.out
    assert progress[0].endswith(f"] error: exit code 2: {USAGE}"), progress
    assert progress[1].endswith("] error: exit code 1"), progress
    assert progress[2].endswith("] error: exit code -15 (killed by SIGTERM)"), progress
    assert progress[3].endswith("] ok"), progress

    # The model is told the same, and the flag is set where the API has one.
    told = tool_results(api, agent.fake.bodies[-1])
    assert told["call_f1"][0].splitlines()[0] == f"exit code 2: {USAGE}"
    assert "half-done" in told["call_f1"][0] and "see --help" in told["call_f1"][0]
    assert told["call_f2"][0].splitlines()[0] == "exit code 1"
    assert told["call_f3"][0].splitlines()[0] == "exit code -15 (killed by SIGTERM)"
    assert told["call_f4"][0].splitlines()[0] == "exit code 0"
    for call in ("call_f1", "call_f2", "call_f3"):
        assert told[call][1] in (True, None), call  # OpenAI tool messages carry no flag
    assert told["call_f4"][1] in (False, None)

    # The transcript keeps is_error, so a resume or `sessions show` says the same.
    (session_id,) = agent.session_ids()
    flags = {
        b["tool_use_id"]: b.get("is_error", False)
        for m in agent.messages(session_id)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert flags == {"call_f1": True, "call_f2": True, "call_f3": True, "call_f4": False}

    # The audit: outcome error beside the exit code, never "ok".
    audit = {r["call_id"]: r for r in agent.audit()}
    assert {c: (r["outcome"], r["decision"]) for c, r in audit.items()} == {
        "call_f1": ("error", "allowed-by-flag"),
        "call_f2": ("error", "allowed-by-flag"),
        "call_f3": ("error", "allowed-by-flag"),
        "call_f4": ("ok", "allowed-by-flag"),
    }
    assert audit["call_f1"]["summary"] == f"exit code 2: {USAGE}"
    assert audit["call_f3"]["summary"] == "exit code -15 (killed by SIGTERM)"
