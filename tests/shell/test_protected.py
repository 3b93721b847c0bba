"""Quest persistence (issue 17, hole 6) and secret variables (hole 7) at the shell layer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.shell.conftest import UserShell
from workhearth.shell.protected import Watch, protected_paths
from workhearth.shell.runner import run
from workhearth.shell.sandbox import Sandbox, sandbox_status
from workhearth.shell.snapshot import capture, secret_name
from workhearth.trash import Trash

STATUS = sandbox_status()
needs_bwrap = pytest.mark.skipif(not STATUS.available, reason=STATUS.message)


def test_protected_paths_cover_each_folder_and_home(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    paths = protected_paths([work], str(home))
    assert work / ".mcp.json" in paths and work / ".git" / "hooks" in paths
    assert home / ".bashrc" in paths and home / ".config" / "systemd" / "user" in paths
    assert work / ".gitconfig" not in paths  # ~/ only
    assert protected_paths([work], None) == tuple(p for p in paths if home not in p.parents)


def test_the_watch_moves_what_appeared_to_the_trash(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".bashrc").write_text("mine\n")
    trash = Trash(tmp_path / "trash")
    watch = Watch(protected_paths([work], None))
    (work / ".mcp.json").write_text("{}")
    (work / ".git" / "hooks").mkdir()
    (work / ".git" / "hooks" / "pre-commit").write_text("evil")
    os.rename(work / ".bashrc", work / "b")
    (work / ".bashrc").write_text("planted\n")

    warnings = watch.sweep(trash, session="s1")

    # The planted .bashrc is in the trash; the user's, moved by the command, is at b.
    assert sorted(p.name for p in work.iterdir()) == [".git", "b"]
    assert not (work / ".git" / "hooks").exists()
    assert {Path(i.original).name for i in trash.list()} == {".mcp.json", "hooks", ".bashrc"}
    assert sum("moved to the trash" in w for w in warnings) == 3, warnings
    assert Watch(protected_paths([work], None)).sweep(trash) == []


def test_a_replaced_link_comes_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    (home / "dotfiles" / "bashrc").write_text("mine\n")
    (home / ".bashrc").symlink_to("dotfiles/bashrc")
    watch = Watch(protected_paths([], str(home)))
    (home / ".bashrc").unlink()
    (home / ".bashrc").write_text("planted\n")
    (warning,) = watch.sweep(Trash(tmp_path / "trash"))
    assert os.readlink(home / ".bashrc") == "dotfiles/bashrc", warning
    assert (home / ".bashrc").read_text() == "mine\n"
    assert "the link to dotfiles/bashrc is back" in warning


def test_a_path_moved_away_is_reported(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    watch = Watch(protected_paths([work], None))
    os.rename(work / ".git", work / ".git-old")
    warnings = watch.sweep(Trash(tmp_path / "trash"))
    assert any(".git/hooks was moved away" in w for w in warnings), warnings


def test_existing_protected_paths_are_bound_read_only_and_missing_ones_not(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / "dotfiles").mkdir()
    (work / "dotfiles" / "zshrc").write_text("x")
    (work / ".zshrc").symlink_to("dotfiles/zshrc")
    outside.mkdir()
    (outside / ".bashrc").write_text("x")
    frozen = protected_paths([work, outside], None)
    sandbox = Sandbox([work], tmp_path / "tmp", "bwrap", frozen=frozen)
    argv = sandbox.argv(["true"])
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    real = os.path.realpath
    assert real(work / ".git" / "hooks") in bound
    assert real(work / "dotfiles" / "zshrc") in bound  # a link is bound at its target
    assert str(work / ".mcp.json") not in bound and real(outside / ".bashrc") not in bound


@needs_bwrap
def test_a_confined_command_cannot_change_protected_paths_and_leaves_no_mount_points(
    bash_user: UserShell, tmp_path: Path
) -> None:
    work = bash_user.workspace
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".bashrc").write_text("mine\n")
    before = sorted(p.name for p in work.iterdir())
    snap = capture(bash_user.paths, work, bash_user.env)
    frozen = protected_paths([work], None)
    sandbox = Sandbox.create([work], tmp_path / "tmp", STATUS, frozen=frozen)
    assert sandbox is not None
    for command in (
        "echo evil >> .bashrc",
        "echo evil > .git/hooks/post-checkout",
        "git config --file .git/config core.fsmonitor evil",
        "rm -rf .git/hooks",
        "mv .bashrc x",
    ):
        result = run(command, work, snap, 10, bash_user.env, sandbox=sandbox)
        assert result.exit_code != 0, (command, result.stdout)
    assert run("ls -A", work, snap, 10, bash_user.env, sandbox=sandbox).exit_code == 0
    assert sorted(p.name for p in work.iterdir()) == before  # no empty .mcp.json, .envrc…
    assert (work / ".bashrc").read_text() == "mine\n"
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert list((work / ".git" / "hooks").iterdir()) == []


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("HEARTH_BANK_TOKEN", True),
        ("github_token", True),
        ("MY_SECRET", True),
        ("DB_PASSWORD", True),
        ("aws_region", True),
        ("SSH_AUTH_SOCK", True),
        ("GPG_PASSPHRASE", True),
        ("PATH", False),
        ("HOME", False),
        ("KEYTIMEOUT", False),
        ("VIRTUAL_ENV", False),
        ("LANG", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert secret_name(name) is secret
    assert secret_name(name, keep=[name.lower()]) is False


def test_a_quest_snapshot_leaves_secret_variables_out(any_user: UserShell) -> None:
    any_user.rc("export RC_TOKEN=rc-token-1\nexport RC_PLAIN=rc-plain-1\n")
    env = {
        **any_user.env,
        "OPENAI_API_KEY": "sk-hidden-1",
        "db_password": "pw-hidden-1",
        "Npm_Token": "npm-kept-1",
    }
    quest = capture(any_user.paths, any_user.workspace, env, withhold=True, keep=["NPM_TOKEN"])
    full = capture(any_user.paths, any_user.workspace, env)
    assert quest.withheld and not full.withheld
    text = quest.path.read_text()
    assert "rc-plain-1" in text and "npm-kept-1" in text
    assert not [s for s in ("sk-hidden-1", "pw-hidden-1", "rc-token-1") if s in text]
    result = run("env", any_user.workspace, quest, 10, env)
    assert "rc-plain-1" in result.stdout and "sk-hidden-1" not in result.stdout
    assert "rc-token-1" in full.path.read_text() and "sk-hidden-1" in full.path.read_text()


def test_a_fallback_quest_snapshot_keeps_only_named_variables(bash_user: UserShell) -> None:
    bash_user.rc("if then fi\n")  # a syntax error: the clean fallback
    env = {**bash_user.env, "GITHUB_TOKEN": "gh-kept-1", "OPENAI_API_KEY": "sk-hidden-1"}
    snap = capture(bash_user.paths, bash_user.workspace, env, withhold=True, keep=["github_token"])
    assert snap.fallback
    text = snap.path.read_text()
    assert "gh-kept-1" in text and "sk-hidden-1" not in text
