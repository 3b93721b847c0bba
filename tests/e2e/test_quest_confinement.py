"""What a quest's shell commands can see and change, through the real ``hearth run --mode quest``.

A scripted provider asks for ``shell`` calls; the commands run under the real
bubblewrap sandbox. Each test then checks the files on the host and the tool
results the provider got back.
"""

from __future__ import annotations

import dataclasses
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import Hearth, make_hearth, tree_digest
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, tool_results, write_config
from tests.e2e.test_cli_sessions import assert_one_line_error
from tests.fake_providers import FakeProvider
from workhearth.shell.sandbox import sandbox_status

STATUS = sandbox_status()
pytestmark = pytest.mark.skipif(not STATUS.available, reason=STATUS.message)
API = "openai"


def quest(hearth: Hearth, *commands: str, task: str = "poke around") -> list[str]:
    """Run one quest whose model runs ``commands`` one per step; each tool result, in order."""
    replies = [
        calls_reply(API, (f"call_{n}", "shell", {"command": c})) for n, c in enumerate(commands)
    ]
    with FakeProvider([*replies, text_reply(API, "Done.")]) as fake:
        result = Agent(hearth, API, fake).run("run", task, "--mode", "quest")
    assert result.code == 0, result.err
    assert "not confined" not in result.err
    results = tool_results(API, fake.bodies[-1])
    return [results[f"call_{n}"][0] for n in range(len(commands))]


@pytest.fixture
def home_in_workspace(tmp_path: Path) -> Hearth:
    """``HEARTH_HOME=$PWD/.hearth``: hearth's data inside the folder the quest may write."""
    plain = make_hearth(tmp_path / "one")
    home = plain.workspace / ".hearth"
    return dataclasses.replace(plain, home=home, env={**plain.env, "HEARTH_HOME": str(home)})


def test_a_quest_command_cannot_read_or_change_hearth_home_inside_the_workspace(
    home_in_workspace: Hearth,
) -> None:
    hearth = home_in_workspace
    write_config(hearth, '[quest]\ndenied_commands = ["sudo"]\n')
    seeded = hearth.seed([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    (hearth.workspace / "old.txt").write_text("old\n")
    # A first quest leaves a trash entry and audit lines behind.
    with FakeProvider(
        [calls_reply(API, ("call_d", "delete", {"path": "old.txt"})), text_reply(API, "ok")]
    ) as fake:
        assert Agent(hearth, API, fake).run("run", "tidy", "--mode", "quest").code == 0
    config = hearth.home / "config.toml"
    before = {
        "config": config.read_bytes(),
        "trash": tree_digest(hearth.home / "trash"),
        "seeded": hearth.transcript(seeded).read_bytes(),
    }
    assert before["trash"], "the first quest should have put old.txt in the trash"
    audit_before = (hearth.home / "audit.jsonl").read_bytes()

    outputs = quest(
        hearth,
        "cat .hearth/config.toml; ls -A .hearth; cat .hearth/audit.jsonl; ls -R .hearth/trash",
        "printf '[quest]\\ndenied_commands = []\\n' > .hearth/config.toml",
        "rm -rf .hearth/trash/* .hearth/projects/*/sessions/*; ls -A .hearth/trash",
        """echo '{"tool": "forged"}' >> .hearth/audit.jsonl""",
        "echo sourced-and-ran",
    )

    looked, rewrote, removed, forged, plain = outputs
    assert "denied_commands" not in looked and "call_d" not in looked, looked
    # Only the folders leading to the shell snapshot are there: no config, audit, trash.
    assert "--- stdout ---\nprojects\n--- stderr ---" in looked, looked
    assert "exit code 0" not in rewrote and "Read-only file system" in rewrote, rewrote
    assert "Read-only file system" in removed or "exit code 0" not in removed, removed
    assert "exit code 0" not in forged, forged
    # The session's shell snapshot is still sourced (a failed source exits 126 first).
    assert plain.startswith("exit code 0") and "sourced-and-ran" in plain, plain
    assert config.read_bytes() == before["config"]
    assert tree_digest(hearth.home / "trash") == before["trash"]
    assert hearth.transcript(seeded).read_bytes() == before["seeded"]
    audit = (hearth.home / "audit.jsonl").read_bytes()
    assert audit.startswith(audit_before)
    # hearth's own lines only (the forging command is in one, as an argument)
    ended = [r for r in map(orjson.loads, audit.splitlines()) if r["outcome"] != "started"]
    assert [r["tool"] for r in ended] == ["delete"] + ["shell"] * 5


def test_a_quest_command_cannot_read_the_users_ssh_key(hearth: Hearth) -> None:
    # The workspace is the user's home, as when hearth runs in ~.
    home = hearth.workspace
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("FAKE PRIVATE KEY\n")
    (home / ".netrc").write_text("machine example.org password hunter2\n")
    hearth.env["HOME"] = str(home)
    write_config(hearth)

    key, netrc = quest(
        hearth, "echo home=$HOME; cat $HOME/.ssh/id_rsa", "cat ~/.netrc; rm -f ~/.netrc"
    )

    assert f"home={home}" in key
    assert "FAKE PRIVATE KEY" not in key and "exit code 0" not in key, key
    assert "hunter2" not in netrc and "exit code 0" not in netrc, netrc
    assert (home / ".netrc").read_text() == "machine example.org password hunter2\n"
    assert (home / ".ssh" / "id_rsa").read_text() == "FAKE PRIVATE KEY\n"


@pytest.fixture
def loopback_port() -> Iterator[int]:
    """A server on the host's loopback that accepts connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def test_hide_entries_are_hidden_and_network_false_cuts_the_network(
    hearth: Hearth, loopback_port: int
) -> None:
    home = hearth.elsewhere
    (home / "private").mkdir()
    (home / "private" / "plan.txt").write_text("the secret plan\n")
    hearth.env["HOME"] = str(home)
    write_config(hearth, '[quest]\nhide = ["~/private"]\nnetwork = false\n')
    connect = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{loopback_port}), 3); print('connected')\""
    )

    plan, net, links = quest(hearth, "cat ~/private/plan.txt", connect, "cat /proc/net/dev")

    assert "secret plan" not in plan and "exit code 0" not in plan, plan
    assert "connected" not in net and "exit code 0" not in net, net
    devices = {line.split(":")[0].strip() for line in links.splitlines() if ":" in line}
    assert devices == {"lo"}, links
    # Outside the sandbox the server was there all along.
    socket.create_connection(("127.0.0.1", loopback_port), 3).close()


def test_an_authorized_folders_hearth_config_is_read_only(hearth: Hearth) -> None:
    write_config(hearth)
    project = hearth.workspace / ".hearth"
    project.mkdir()
    (project / "config.toml").write_text("[quest]\nmax_steps = 5\n")
    before = tree_digest(project)

    changed, _ = quest(
        hearth,
        "echo 'max_steps = 500' >> .hearth/config.toml",
        "touch .hearth/skill.md; mv .hearth moved; touch done.txt",
    )

    assert "exit code 0" not in changed and "Read-only file system" in changed, changed
    assert tree_digest(project) == before
    assert (hearth.workspace / "done.txt").exists()  # the rest of the folder stays writable
    assert not (hearth.workspace / "moved").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[quest]\nhide = ["relative/dir"]\n', "hide entries must be absolute or start with ~/"),
        ('[quest]\nhide = "~/.secrets"\n', "[quest] hide must be a list of strings"),
        ('[quest]\nnetwork = "no"\n', "[quest] network must be true or false"),
    ],
)
def test_a_bad_hide_or_network_value_is_a_one_line_config_error(
    hearth: Hearth, text: str, said: str
) -> None:
    write_config(hearth, text)
    with FakeProvider([]) as fake:
        ran = Agent(hearth, API, fake).run("run", "anything", "--mode", "quest")
    assert str(hearth.home / "config.toml") in assert_one_line_error(ran, said)
    assert fake.bodies == []
    doctor = hearth.run("doctor")
    assert doctor.code != 0 and "Traceback" not in doctor.out + doctor.err, doctor.err
    assert said in doctor.err, doctor.err


def test_doctor_prints_what_quest_hides(hearth: Hearth) -> None:
    write_config(hearth, '[quest]\nhide = ["~/private", "/srv/secrets"]\n')
    home = hearth.elsewhere
    done = hearth.run("doctor", env={"HOME": str(home)})
    assert done.code == 0, done.err
    (line,) = [line for line in done.out.splitlines() if line.startswith("quest hides")]
    for path in (hearth.home, home / ".ssh", home / ".aws", home / "private", "/srv/secrets"):
        assert str(path) in line, line
    report = hearth.json("doctor", env={"HOME": str(home)})
    assert str(home / ".docker" / "config.json") in report["quest_hides"]
