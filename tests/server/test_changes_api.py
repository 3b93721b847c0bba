"""GET /v1/sessions/{id}/changes: the files a task's tool calls changed on disk (issue 18)."""

from __future__ import annotations

import shutil

from tests.server.conftest import Served
from workhearth.agent.approval import allow_all
from workhearth.agent.changes import ChangeDetector
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import ToolContext, default_registry
from workhearth.agent.workspace import Workspaces
from workhearth.trash import Trash


def _task(served: Served) -> str:
    """A session whose tool calls wrote, ran a command and deleted, as a task does."""
    (served.workspace / "b.txt").write_text("b\n")
    wh = served.library()
    session = wh.sessions.create(mode="agent")
    workspaces = Workspaces(served.config.paths, current=served.workspace)
    fs = SafeFS(
        workspaces.roots(),
        trash=Trash(served.config.paths.trash),
        protected=workspaces.protected(),
    )
    env = {"HOME": str(served.workspace.parent), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    env["SHELL"] = shutil.which("bash") or "/bin/bash"
    ctx = ToolContext(session=session, fs=fs, mode="agent", approver=allow_all, env=env)
    ChangeDetector.for_context(ctx)
    reg = default_registry()
    reg.call("write_file", {"path": "r.md", "content": "x"}, ctx.for_call("call_w"))
    reg.call("shell", {"command": "mkdir out; echo 1 > out/a; rm b.txt"}, ctx.for_call("call_s"))
    session.close()
    return session.id


def test_a_tasks_changes_are_listed_by_the_rest_api(served: Served) -> None:
    sid = _task(served)
    got = served.api.get(f"/v1/sessions/{sid}/changes")
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["session_id"] == sid and body["omitted"] == 0 and body["untracked"] is None
    assert [(c["path"], c["kind"], c["tool"], c["call_id"]) for c in body["changes"]] == [
        ("r.md", "created", "write_file", "call_w"),
        ("b.txt", "deleted", "shell", "call_s"),
        ("out/a", "created", "shell", "call_s"),
    ]
    # A session id prefix works like everywhere else.
    assert served.api.get(f"/v1/sessions/{sid[:16]}/changes").json() == body


def test_changes_of_an_unknown_session_are_a_404(served: Served) -> None:
    got = served.api.get("/v1/sessions/no-such-session/changes")
    assert got.status_code == 404
    assert str(served.home) not in got.text
    assert served.client.get("/v1/sessions/x/changes").status_code == 401
