"""A web task's failed command is a failed call in its events (issue #18, item 1).

The real API (``create_app`` under uvicorn) and a scripted OpenAI-compatible model: the
task's ``tool_result`` event for a command that exits 2 is not ok and carries the exit
code and stderr's first line; the task still ends ``done``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider, Reply
from tests.server.tasks_helpers import Api, running_api

USAGE = "usage: split.py FILE -o DIR"
FAILING = f"printf '{USAGE}\\n' >&2; exit 2"


@pytest.fixture
def api(tmp_path: Path, serve: Callable[[list[Reply]], FakeProvider]) -> Iterator[Api]:
    fake = serve(
        [
            calls_reply("openai", ("call_x1", "shell", {"command": FAILING})),
            text_reply("openai", "The split failed."),
        ]
    )
    (tmp_path / "workspace").mkdir()
    with running_api(tmp_path / "home", tmp_path / "workspace", fake) as running:
        running.fake = fake  # type: ignore[attr-defined]
        yield running


def test_a_web_task_reports_a_failed_command_as_failed(api: Api, tmp_path: Path) -> None:
    sid = api.start(task="split the file", mode="agent")
    with api.events(sid) as events:
        api.until(events, "approval")
        answer = api.client.post(f"/v1/tasks/{sid}/approvals/call_x1", json={"answer": "once"})
        assert answer.status_code == 204, answer.text
        rest = list(events)
    result = next(e for e in rest if e.name == "tool_result")
    assert result.data["id"] == "call_x1"
    assert result.data["ok"] is False
    assert result.data["summary"] == f"error: exit code 2: {USAGE}"
    # A failed call is not a failed task.
    assert rest[-1].data["reason"] == "done"
    assert api.client.get(f"/v1/tasks/{sid}").json()["status"] == "done"

    told = api.fake.bodies[-1]["messages"][-1]  # type: ignore[attr-defined]
    assert told["role"] == "tool"
    assert told["content"].splitlines()[0] == f"exit code 2: {USAGE}"
    audit = [
        orjson.loads(line) for line in (tmp_path / "home" / "audit.jsonl").read_bytes().splitlines()
    ]
    assert [(r["call_id"], r["outcome"]) for r in audit] == [
        ("call_x1", "started"),
        ("call_x1", "error"),
    ]
