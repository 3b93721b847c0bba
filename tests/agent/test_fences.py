"""SafeFS fences (issue 17): quest hides and protects paths from every file tool; ask and
agent mode keep credential stores from the model unless the user says yes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workhearth.agent.approval import Policy
from workhearth.agent.fences import CredentialStore, FenceError, fences_for
from workhearth.agent.safefs import PathDenied, SafeFS
from workhearth.errors import ConfigError
from workhearth.trash import Trash


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's home that is also the workspace, with a key, a hide folder and a git repo."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (home / ".netrc").write_text("password NETRC\n")
    (home / "private").mkdir()
    (home / "private" / "plan.txt").write_text("PLAN\n")
    (home / ".git" / "hooks").mkdir(parents=True)
    (home / ".git" / "config").write_text("[core]\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / "src").mkdir()
    (home / "src" / "app.py").write_text("KEY = 1\n")
    return home


def make_fs(home: Path, mode: str, tmp_path: Path) -> SafeFS:
    fences = fences_for(mode, [home], {"HOME": str(home)}, ("~/private",))
    return SafeFS([home], trash=Trash(tmp_path / "trash"), fences=fences)


@pytest.fixture
def quest(home: Path, tmp_path: Path) -> SafeFS:
    return make_fs(home, "quest", tmp_path)


@pytest.mark.parametrize(
    ("path", "write"),
    [
        (".ssh/id_rsa", ".ssh/authorized_keys"),
        (".netrc", ".netrc"),
        ("private/plan.txt", "private/new/plan.txt"),
        ("./.ssh/../.ssh", "src/../.ssh/config"),
    ],
)
def test_quest_refuses_every_access_to_what_it_hides(
    quest: SafeFS, home: Path, path: str, write: str
) -> None:
    for attempt in (
        lambda: quest.read_bytes(path),
        lambda: quest.stat(path),
        lambda: list(quest.walk(path)),
        lambda: quest.write_text(write, "x"),
        lambda: quest.delete(path),
    ):
        with pytest.raises(FenceError, match="quest mode hides"):
            attempt()
    assert (home / ".ssh" / "id_rsa").read_text() == "KEY\n"
    assert not (home / "private" / "new").exists()
    assert sorted(p.name for p in (home / ".ssh").iterdir()) == ["id_rsa"]


def test_quest_walks_leave_hidden_paths_out(quest: SafeFS) -> None:
    names = {e.rel for e in quest.walk(".")}
    assert "src/app.py" in names and ".bashrc" in names
    assert not {n for n in names if n.startswith((".ssh", "private", ".netrc"))}
    assert quest.glob("**/id_rsa") == []


def test_a_link_to_a_hidden_path_is_refused_as_the_path(quest: SafeFS, home: Path) -> None:
    (home / "src" / "keys").symlink_to("../.ssh")
    (home / "src" / "k").symlink_to(home / ".ssh" / "id_rsa")
    for path in ("src/keys/id_rsa", "src/k"):
        with pytest.raises(FenceError):
            quest.read_bytes(path)
    # Listed as links (their text), never entered.
    assert {e.rel for e in quest.walk("src")} == {"app.py", "keys", "k"}


def test_a_hidden_folder_reached_through_another_spelling_is_refused(
    home: Path, tmp_path: Path
) -> None:
    # The user's HOME is given through a link; the workspace is the real folder.
    alias = tmp_path / "alias"
    alias.symlink_to(home)
    fences = fences_for("quest", [home], {"HOME": str(alias)})
    fs = SafeFS([home], fences=fences)
    with pytest.raises(FenceError):
        fs.read_bytes(".ssh/id_rsa")


@pytest.mark.parametrize(
    "path",
    [
        ".bashrc",
        ".mcp.json",
        ".claude/settings.json",
        ".hearth/skills/x/SKILL.md",
        ".git/hooks/pre-commit",
        ".git/config",
        ".gitconfig",
        ".config/systemd/user/x.service",
        ".vscode/tasks.json",
    ],
)
def test_quest_cannot_change_or_create_what_runs_later(
    quest: SafeFS, home: Path, path: str
) -> None:
    with pytest.raises(FenceError, match="may not change or create"):
        quest.write_text(path, "evil")
    with pytest.raises(FenceError):
        quest.mkdir(path)
    top = home / path.split("/")[0]
    # A refused write makes no folder on its way.
    assert top.exists() == (path.split("/")[0] in (".bashrc", ".git"))


def test_a_refused_write_through_a_link_makes_nothing(quest: SafeFS, home: Path) -> None:
    (home / "src" / "cfg").symlink_to("../.claude")
    with pytest.raises(FenceError):
        quest.write_text("src/cfg/settings.json", "{}")
    assert not (home / ".claude").exists()


def test_quest_may_read_protected_paths_but_not_delete_them(quest: SafeFS, home: Path) -> None:
    assert quest.read_text(".bashrc") == "# rc\n"
    assert ".git/config" in {e.rel for e in quest.walk(".")}
    for path in (".bashrc", ".git", ".git/hooks"):
        with pytest.raises((FenceError, PathDenied)):
            quest.delete(path)
    assert (home / ".git" / "hooks").is_dir() and (home / ".bashrc").exists()
    quest.write_text("src/new.py", "ok")  # the rest of the folder stays writable
    quest.delete("src/new.py")


def test_ask_and_agent_refuse_credential_reads_unless_allowed(home: Path, tmp_path: Path) -> None:
    for mode in ("ask", "agent"):
        fs = make_fs(home, mode, tmp_path)
        with pytest.raises(CredentialStore, match="credential store"):
            fs.read_bytes(".ssh/id_rsa")
        with pytest.raises(CredentialStore):
            list(fs.walk(".ssh"))
        names = {e.rel for e in fs.walk(".")}
        assert not {n for n in names if n.startswith((".ssh", ".netrc"))}
        assert "private/plan.txt" in names  # [quest] hide is quest's
        with fs.open_read(".ssh/id_rsa", credentials_ok=True) as fh:
            assert fh.read() == b"KEY\n"
        assert fs.stat(".ssh/id_rsa").size == 4  # metadata is not content
        fs.write_text(".bashrc", "# changed\n")  # writes are the approval's business


def test_credential_stores_are_found_by_inode_too(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    os.link(home / ".netrc", other / "netrc")  # a hard link: the same inode
    fences = fences_for("ask", [other], {"HOME": str(home)})
    fs = SafeFS([other], fences=fences)
    with pytest.raises(CredentialStore):
        fs.read_bytes("netrc")


def test_quest_env_names_are_checked() -> None:
    policy = Policy.from_config({"quest": {"env": ["GITHUB_TOKEN", "npm_token"]}})
    assert policy.env == ("GITHUB_TOKEN", "npm_token")
    for bad in ("PATH", ["a b"], [1], ["$X"]):
        with pytest.raises(ConfigError, match=r"\[quest\] env"):
            Policy.from_config({"quest": {"env": bad}})
