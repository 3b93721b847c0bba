"""Every folder hearth makes under its home is 0700 and every file 0600 (DESIGN §2, §3).

The home is populated through the library (no CLI, so no umask set for us) and
through the real ``hearth`` command, both with the common umask 0o022, and then
every entry is checked for group or other bits.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, make_hearth, text
from workhearth import Workhearth
from workhearth.agent.audit import DECISIONS, AuditLog
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import SafeFS
from workhearth.agent.workspace import Workspaces
from workhearth.trash import Trash


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _open_to_others(home: Path) -> list[str]:
    """Entries of ``home`` (itself included) with any group/other bit, as ``mode path``.

    A trashed payload keeps the user's own modes (a restore must put them back
    as they were); its slot folder is 0700, which is checked instead.
    """
    found = []
    for root, dirs, files in os.walk(home):
        here = Path(root)
        if here.parent.parent == home / "trash" and here.name == "payload":
            dirs.clear()
            continue
        for name in [".", *dirs, *files]:
            path = here / name
            if name != "." and here.parent == home / "trash" and name == "payload":
                continue
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if not stat.S_ISLNK(os.lstat(path).st_mode) and mode & 0o077:
                found.append(f"{mode:04o} {path.relative_to(home.parent)}")
    return sorted(set(found))


def test_a_home_made_through_the_library_is_private(tmp_path: Path, umask_022: None) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "plant.txt").write_text("fern\n")
    wh = Workhearth(home=home, workspace=work)

    wh.memory.save("Ana waters the fern on Mondays", tags=["plants"])
    wh.memory.save("The user prefers short answers", layer="user")
    wh.memory.log_daily("looked at the fern today")
    wh.memory.index()
    assert wh.memory.search("fern")
    wh.memory.close()

    session = wh.sessions.create(model="openai:test")
    with session:
        session.append_message(text("user", "hello"))
        # Why: over a MiB of tail makes close() write the snapshot.
        session.append_message(text("assistant", "x" * (1 << 20)))
        session.write_tool_output("call1", "tool output")
        session.turn_end()
    assert (session.folder / "snapshot.zst").is_file()

    fs = SafeFS([work], trash=Trash(wh.paths.trash), protected=[home])
    history = FileHistory(wh.sessions.open(session.id))
    history.save(str(work / "src" / "plant.txt"), b"fern\n", replaced_by=b"palm\n")
    fs.delete("src/plant.txt", session=session.id)
    AuditLog(wh.paths.audit_log).record(
        session=session.id, mode="agent", tool="delete", decision=DECISIONS[0]
    )
    extra = tmp_path / "extra"
    extra.mkdir()
    Workspaces(wh.paths, work).add(extra)
    if shutil.which("bash"):
        from workhearth.shell.snapshot import capture

        env = {"SHELL": shutil.which("bash") or "", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        capture(wh.paths, work, env)

    assert (home / "awareness" / "main" / ".index.sqlite").exists()
    assert (home / "trash").is_dir() and (home / "audit.jsonl").is_file()
    found = _open_to_others(home)
    assert not found, "\n".join(found)


def _cli_home(tmp_path: Path) -> Hearth:
    h = make_hearth(tmp_path / "cli")
    shutil.rmtree(h.home, ignore_errors=True)
    return h


def test_a_home_made_through_the_cli_is_private(tmp_path: Path, umask_022: None) -> None:
    h = _cli_home(tmp_path)
    (h.workspace / "plant.txt").write_text("fern\n")
    for args in (
        ("memory", "save", "Ana waters the fern on Mondays", "--tag", "plants"),
        ("memory", "save", "short answers please", "--level", "critical"),
        ("memory", "index"),
        ("memory", "search", "fern"),
        ("workspace", "add", str(h.elsewhere)),
        ("shell", "snapshot"),
        ("sessions", "list"),
        ("audit",),
        ("trash", "list"),
    ):
        result = h.run(*args)
        assert result.code == 0, f"{args}: {result.err}"
    sid = h.seed([text("user", "hello"), text("assistant", "hi")])
    assert h.run("sessions", "show", sid).code == 0
    assert h.run("sessions", "delete", sid).code == 0
    assert (h.home / "awareness").is_dir() or (h.home / "projects").is_dir()
    found = _open_to_others(h.home)
    assert not found, "\n".join(found)
