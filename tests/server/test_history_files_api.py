"""A task's file history (GET /v1/trash?session=, POST /v1/trash/{n}/restore?session=)
and the workspace file listing for the page's file pickers (GET /v1/files)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.server.conftest import Served
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import SafeFS
from workhearth.agent.workspace import Workspaces
from workhearth.trash import Trash


def _agent_writes(served: Served, path: str, texts: list[str]) -> str:
    """A session whose write_file calls replaced ``path`` with each text in turn."""
    session = served.library().sessions.create(mode="agent")
    history = FileHistory(session)
    workspaces = Workspaces(served.config.paths, current=served.workspace)
    fs = SafeFS(workspaces.roots(), protected=workspaces.protected())
    for i, text in enumerate(texts, 1):
        data = text.encode()
        shown = fs.display(path)

        def keep(
            previous: bytes | None, shown: str = shown, data: bytes = data, i: int = i
        ) -> None:
            if previous is not None:
                history.save(shown, previous, call_id=f"call_{i}", replaced_by=data)

        fs.write_bytes(path, data, before_replace=keep)
    return session.id


def test_a_sessions_versions_are_listed_and_one_is_restored(served: Served) -> None:
    report = served.workspace / "report.md"
    report.write_text("my draft\n")
    sid = _agent_writes(served, "report.md", ["agent v1\n", "agent v2\n"])

    listed = served.api.get("/v1/trash", params={"session": sid})
    assert listed.status_code == 200, listed.text
    versions = listed.json()["versions"]
    assert [(v["n"], v["call_id"], v["original"]) for v in versions] == [
        (1, "call_1", str(report)),
        (2, "call_2", str(report)),
    ]
    # The plain trash list has no versions; a session prefix works like the CLI's.
    assert served.api.get("/v1/trash").json()["versions"] == []
    assert len(served.api.get("/v1/trash", params={"session": sid[:12]}).json()["versions"]) == 2

    restored = served.api.post(f"/v1/trash/1/restore?session={sid}")
    assert restored.status_code == 200, restored.text
    assert restored.json()["n"] == 1 and report.read_text() == "my draft\n"
    # The restore is undoable: what it replaced is the newest version.
    newest = served.api.get("/v1/trash", params={"session": sid}).json()["versions"][-1]
    assert newest["call_id"] == "restore-1"
    served.api.post(f"/v1/trash/{newest['n']}/restore?session={sid}")
    assert report.read_text() == "agent v2\n"


def test_a_file_changed_since_the_session_wrote_it_is_422_unless_overwrite(
    served: Served,
) -> None:
    notes = served.workspace / "notes.txt"
    notes.write_text("mine\n")
    sid = _agent_writes(served, "notes.txt", ["agent\n"])
    notes.write_text("edited by me after the agent\n")
    refused = served.api.post(f"/v1/trash/1/restore?session={sid}")
    assert refused.status_code == 422 and "changed since" in refused.json()["detail"]
    assert notes.read_text() == "edited by me after the agent\n"
    done = served.api.post(f"/v1/trash/1/restore?session={sid}", json={"overwrite": True})
    assert done.status_code == 200 and notes.read_text() == "mine\n"


def test_unknown_sessions_and_versions_are_404(served: Served) -> None:
    (served.workspace / "a.txt").write_text("a\n")
    sid = _agent_writes(served, "a.txt", ["b\n"])
    for url in (
        "/v1/trash/1/restore?session=no-such-session",
        f"/v1/trash/7/restore?session={sid}",
        f"/v1/trash/x1/restore?session={sid}",
        f"/v1/trash/%C2%B2/restore?session={sid}",
    ):
        r = served.api.post(url)
        assert r.status_code == 404, (url, r.text)
        assert set(r.json()) == {"detail", "code", "params"}
    assert served.api.get("/v1/trash", params={"session": "nope"}).status_code == 404


def test_a_restore_never_writes_through_a_folder_that_became_a_link_out(
    served: Served, tmp_path: Path
) -> None:
    (served.workspace / "docs").mkdir()
    (served.workspace / "docs" / "plan.md").write_text("plan\n")
    sid = _agent_writes(served, "docs/plan.md", ["agent plan\n"])
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(served.workspace / "docs", tmp_path / "old-docs")
    os.symlink(outside, served.workspace / "docs")
    r = served.api.post(f"/v1/trash/1/restore?session={sid}")
    assert r.status_code in (400, 422), r.text
    assert list(outside.iterdir()) == []


def test_trash_items_of_a_session_are_listed_with_its_versions(served: Served) -> None:
    (served.workspace / "a.txt").write_text("a\n")
    sid = _agent_writes(served, "a.txt", ["b\n"])
    doomed = served.workspace / "old.txt"
    doomed.write_text("old\n")
    trash = Trash(served.config.paths.trash)
    mine = trash.put(doomed, session=sid)
    other = served.workspace / "other.txt"
    other.write_text("x\n")
    trash.put(other)
    items = served.api.get("/v1/trash", params={"session": sid}).json()["items"]
    assert [i["id"] for i in items] == [mine.id]


# ------------------------------------------------------------------ files
def _tree(root: Path) -> None:
    for rel in (
        "README.md",
        "docs/report.md",
        "docs/read-me-too.txt",
        "docs/deep/x.csv",
        ".env",
        ".secret/key.txt",
        "docs/.hidden.md",
        "node_modules/pkg/index.js",
        ".git/config",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)


def test_files_lists_the_workspace_without_hidden_or_skipped_folders(served: Served) -> None:
    _tree(served.workspace)
    r = served.api.get("/v1/files")
    assert r.status_code == 200, r.text
    assert r.json() == {
        "files": ["README.md", "docs/deep/x.csv", "docs/read-me-too.txt", "docs/report.md"],
        "truncated": False,
    }
    by_prefix = served.api.get("/v1/files", params={"prefix": "docs/re"}).json()
    assert by_prefix["files"] == ["docs/read-me-too.txt", "docs/report.md"]
    limited = served.api.get("/v1/files", params={"limit": 2}).json()
    assert limited == {"files": ["README.md", "docs/deep/x.csv"], "truncated": True}
    assert served.api.get("/v1/files", params={"prefix": ".secret/"}).json()["files"] == []
    assert served.api.get("/v1/files", params={"prefix": "nope/"}).json()["files"] == []


def test_files_never_lists_outside_the_workspace(served: Served, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("secret")
    os.symlink(outside, served.workspace / "escape")
    os.symlink(outside / "private.txt", served.workspace / "link.txt")
    (served.workspace / "ok.txt").write_text("ok")
    assert served.api.get("/v1/files").json()["files"] == ["ok.txt"]
    assert served.api.get("/v1/files", params={"prefix": "escape/"}).json()["files"] == []
    for bad in ("../outside/", "/etc/", "docs/../../x"):
        r = served.api.get("/v1/files", params={"prefix": bad})
        assert r.status_code == 422, (bad, r.text)
    # Another folder as the workspace: a request names it, and only its files come back.
    r = served.api.get("/v1/files", params={"workspace": str(outside)})
    assert r.json()["files"] == ["private.txt"]


def test_files_never_lists_hearths_home_inside_the_workspace(served: Served) -> None:
    # A workspace that holds $HEARTH_HOME (sessions, trash, memory): its folder is skipped.
    outer = served.home.parent
    served.api.post("/v1/memory", json={"content": "The office opens at eight"})
    (served.workspace / "a.txt").write_text("a")
    assert any(served.home.rglob("*.md"))
    r = served.api.get("/v1/files", params={"workspace": str(outer), "limit": 1000})
    assert r.json() == {"files": ["workspace/a.txt"], "truncated": False}
