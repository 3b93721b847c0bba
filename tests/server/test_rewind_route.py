"""``POST /v1/sessions/{id}/rewind`` (issue 22, DESIGN §6): the DESIGN §8 plan, a dry run
that changes nothing, a conflict as a 409 in words, and the files back as they were."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.tasks_helpers import Api


def _run(api: Api, prompt: str) -> str:
    sid = api.start(task=prompt, mode="quest")
    with api.events(sid) as events:
        seen = list(events)
    assert seen[-1].name == "done" and seen[-1].data["status"] == "done", seen[-1].data
    return sid


def test_rewind_over_rest(api_for: Callable[..., Api]) -> None:
    api = api_for(
        [
            calls_reply(
                "openai",
                ("c1", "shell", {"command": "echo new > made.txt && sed -i s/old/new/ a.txt"}),
            ),
            text_reply("openai", "Done."),
        ]
    )
    ws = api.app.state.tasks.workspace
    (ws / "a.txt").write_text("old text\n")
    sid = _run(api, "change things")
    assert (ws / "made.txt").exists() and (ws / "a.txt").read_text() == "new text\n"

    turns = api.client.get(f"/v1/sessions/{sid}/turns")
    assert turns.status_code == 200, turns.text
    assert turns.json()["turns"][0]["files"] == ["a.txt", "made.txt"]
    assert turns.json()["turns"][0]["turn"] == 1

    url = f"/v1/sessions/{sid}/rewind"
    dry = api.client.post(url, json={"to": 1, "dry_run": True})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert set(plan) == {"session_id", "to_turn", "files", "conversation"}
    actions = {f["path"]: f["action"] for f in plan["files"]}
    assert actions == {"a.txt": "restore", "made.txt": "delete"}
    assert (ws / "made.txt").exists(), "a dry run changes nothing"

    (ws / "a.txt").write_text("the user's edit\n")
    refused = api.client.post(url, json={"to": 1})
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert body["code"] == "rewind_conflict" and "a.txt" in body["detail"]
    assert str(ws) not in refused.text

    assert api.client.post(url, json={"to": 9}).status_code == 422
    assert api.client.post(url, json={"to": 1, "bogus": 1}).status_code == 422
    assert api.client.post(f"/v1/sessions/{'f' * 32}/rewind", json={"to": 1}).status_code == 404

    done = api.client.post(url, json={"to": 1, "force": True})
    assert done.status_code == 200, done.text
    assert not (ws / "made.txt").exists() and (ws / "a.txt").read_text() == "old text\n"
