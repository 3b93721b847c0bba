"""Sessions, skills, trash, audit and info routes: shapes and status codes."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import Served
from workhearth.agent.audit import AuditLog
from workhearth.trash import Trash


def seed_session(served: Served, *texts: str) -> str:
    session = served.library().sessions.create(model="openai:test-model")
    with session:
        for i, text in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            session.append_message({"role": role, "content": [{"type": "text", "text": text}]})
        session.turn_end()
    return session.id


def test_info_names_version_workspace_and_home_but_no_secret(served: Served) -> None:
    info = served.api.get("/v1/info").json()
    assert info["workspace"] == str(served.workspace) and info["home"] == str(served.home)
    assert served.token not in str(info)


def test_sessions_list_messages_and_latest(served: Served) -> None:
    sid = seed_session(served, "Plan the offsite", "Here is a plan", "Make it shorter")
    listed = served.api.get("/v1/sessions").json()["sessions"]
    assert [s["session_id"] for s in listed] == [sid]
    assert listed[0]["status"] in ("running", "waiting", "stopped", "done")
    assert listed[0]["title"] == "Plan the offsite"
    messages = served.api.get(f"/v1/sessions/{sid}/messages", params={"count": 2}).json()
    assert messages["total"] == 3 and messages["returned"] == 2
    assert [m["content"][0]["text"] for m in messages["messages"]] == [
        "Here is a plan",
        "Make it shorter",
    ]
    latest = served.api.get(f"/v1/sessions/{sid}/latest").json()
    assert latest["message"]["content"][0]["text"] == "Make it shorter"
    assert served.api.get(f"/v1/sessions/{sid}/messages", params={"count": 31}).status_code == 422
    assert served.api.get("/v1/sessions", params={"limit": 0}).status_code == 422


def test_unknown_session_is_404(served: Served) -> None:
    for path in ("/v1/sessions/20990101-000000-0000/messages", "/v1/sessions/no%20such/latest"):
        response = served.api.get(path)
        assert response.status_code == 404 and response.json()["detail"].startswith("no session")


def test_skills_list_show_and_render(served: Served) -> None:
    skills = served.api.get("/v1/skills").json()
    assert skills and {"name", "description", "source", "path", "status", "problems"} <= set(
        skills[0]
    )
    with_examples = None
    for skill in skills:
        detail = served.api.get(f"/v1/skills/{skill['name']}").json()
        if detail["examples"] and not any(
            v["required"] and v["default"] is None and v["type"] == "file"
            for v in detail["examples"][0]["variables"]
        ):
            with_examples = detail
            break
    assert with_examples is not None and with_examples["body"]
    example = with_examples["examples"][0]
    values = {
        v["name"]: (v["choices"][0] if v["choices"] else "1" if v["type"] == "number" else "x")
        for v in example["variables"]
    }
    rendered = served.api.post(
        f"/v1/skills/{with_examples['name']}/render",
        json={"example": example["id"], "values": values},
    )
    assert rendered.status_code == 200, rendered.text
    assert rendered.json()["prompt"] and "{{" not in rendered.json()["prompt"]
    unknown = served.api.post(
        f"/v1/skills/{with_examples['name']}/render", json={"example": "no-such-example"}
    )
    assert unknown.status_code == 404
    assert served.api.get("/v1/skills/no-such-skill").status_code == 404


def test_trash_list_and_restore(served: Served) -> None:
    doomed = served.workspace / "notes.txt"
    doomed.write_text("keep me")
    item = Trash(served.config.paths.trash).put(doomed, reason="test")
    listed = served.api.get("/v1/trash").json()["items"]
    assert [i["id"] for i in listed] == [item.id] and listed[0]["original"] == str(doomed)
    restored = served.api.post(f"/v1/trash/{item.id}/restore")
    assert restored.status_code == 200 and doomed.read_text() == "keep me"
    assert served.api.post(f"/v1/trash/{item.id}/restore").status_code == 404
    assert served.api.post("/v1/trash/..%2F..%2Fetc/restore").status_code == 404


def test_trash_restore_over_an_existing_file_is_422_unless_overwrite(served: Served) -> None:
    target: Path = served.workspace / "a.txt"
    target.write_text("old")
    item = Trash(served.config.paths.trash).put(target)
    target.write_text("new")
    refused = served.api.post(f"/v1/trash/{item.id}/restore")
    assert refused.status_code == 422 and "exists now" in refused.json()["detail"]
    done = served.api.post(f"/v1/trash/{item.id}/restore", json={"overwrite": True})
    assert done.status_code == 200 and target.read_text() == "old"


def test_audit_by_session(served: Served) -> None:
    log = AuditLog(served.config.paths.audit_log)
    log.record(
        session="s-1", mode="agent", tool="read_file", decision="allowed-by-mode", summary="one"
    )
    log.record(session="s-2", mode="agent", tool="shell", decision="allowed-by-mode", summary="two")
    everything = served.api.get("/v1/audit").json()["records"]
    assert [r["summary"] for r in everything] == ["one", "two"]
    only = served.api.get("/v1/audit", params={"session": "s-2"}).json()["records"]
    assert [r["tool"] for r in only] == ["shell"]
    assert served.api.get("/v1/audit", params={"limit": 0}).status_code == 422


def test_unknown_api_path_is_a_json_404_not_the_page(served: Served) -> None:
    response = served.api.delete("/v1/nothing/here")
    assert response.status_code == 404
    assert response.json() == {"detail": "no such API route", "code": "no_route", "params": {}}
    assert served.client.get("/v1/nothing").status_code == 401
