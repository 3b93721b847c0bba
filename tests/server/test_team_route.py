"""A team task through the REST API (issue 23): questions answered, the plan nudged and
approved by the page's calls, specialists run, the board read back."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.e2e.test_team import LEAD, plan_call, step, step_marker
from tests.fake_providers import RoutedProvider
from tests.server.tasks_helpers import running_api, wait_for

API = "openai"


def test_a_team_task_over_rest(tmp_path: Path) -> None:
    questions = {"questions": [{"id": "tone", "text": "Which tone?", "choices": ["plain", "warm"], "default": "plain"}]}  # fmt: skip
    v1 = [step("draft", "Draft the note")]
    v2 = [*v1, step("polish", "Polish the note", depends_on=["draft"])]
    routes = [
        (
            LEAD,
            [
                calls_reply(API, ("q", "ask_questions", questions)),
                plan_call("p1", v1),
                plan_call("p2", v2),
            ],
        ),
        (step_marker("Draft the note"), [text_reply(API, "Drafted.")]),
        (step_marker("Polish the note"), [text_reply(API, "Polished.")]),
    ]
    (tmp_path / "ws").mkdir()
    with (
        RoutedProvider(routes) as fake,
        running_api(tmp_path / "home", tmp_path / "ws", fake) as api,
    ):
        started = api.client.post("/v1/tasks", json={"task": "a note", "team": True})
        assert started.status_code == 201, started.text
        sid = started.json()["session_id"]
        info = api.wait_status(sid, "waiting")
        team = api.client.get(f"/v1/tasks/{sid}/team").json()
        assert team["phase"] == "questions"
        assert team["questions"][0]["choices"] == ["plain", "warm"]

        bad = api.client.post(f"/v1/tasks/{sid}/resume", json={"answers": {"tone": "loud"}})
        assert bad.status_code == 202  # checked by the run: it ends failed, in words
        failed = api.wait_status(sid, "failed")
        assert "plain, warm" in failed["reason"], failed

        assert (
            api.client.post(
                f"/v1/tasks/{sid}/resume", json={"answers": {"tone": "warm"}}
            ).status_code
            == 202
        )
        api.wait_status(sid, "waiting")
        team = api.client.get(f"/v1/tasks/{sid}/team").json()
        assert team["phase"] == "plan" and team["plan_version"] == 1
        assert "Which tone? — warm" in team["plan"]

        nudged = api.client.post(f"/v1/tasks/{sid}/resume", json={"nudge": "add a polish step"})
        assert nudged.status_code == 202, nudged.text
        api.wait_status(sid, "waiting")
        team = api.client.get(f"/v1/tasks/{sid}/team").json()
        assert team["plan_version"] == 2 and "Polish the note" in team["plan"]

        assert api.client.post(f"/v1/tasks/{sid}/resume", json={"approve": True}).status_code == 202
        api.wait_status(sid, "done", timeout=60)
        team = wait_for("the board", lambda: api.client.get(f"/v1/tasks/{sid}/team").json())
        assert team["phase"] == "done"
        assert [(s["id"], s["status"]) for s in team["steps"]] == [
            ("draft", "done"),
            ("polish", "done"),
        ]
        assert "Polish the note (writer): done" in team["report"]
        assert info["status"] == "waiting"
