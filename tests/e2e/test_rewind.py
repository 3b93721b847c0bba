"""Issue 22, through the real ``hearth`` with a scripted model: a task that writes, edits,
deletes and moves files and runs shell commands that change, create and remove files (a
nested folder with ``rm -r``, a binary file, a mode change) is rewound to each of its
turns, and every path's bytes, mode and presence match that turn's start exactly."""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import agent_for, calls_reply, text_reply  # noqa: F401

API = "openai"
Tree = dict[str, tuple[str, int, bytes | str | None]]


def tree(root: Path) -> Tree:
    """Every path under ``root``: kind, permission bits, and bytes (a link: its text)."""
    out: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes())
    return out


def shell(call_id: str, command: str) -> tuple[str, str, dict[str, Any]]:
    return (call_id, "shell", {"command": command})


# Each turn: its prompt and the calls the model makes in it.
TURNS: list[tuple[str, list[tuple[str, str, dict[str, Any]]]]] = [
    (
        "set up the project",
        [
            ("c1", "write_file", {"path": "notes.md", "content": "first draft\n"}),
            shell(
                "c2",
                "mkdir -p out/deep/er && echo one > out/deep/er/a.txt && echo two > out/b.txt"
                " && printf '\\000\\001\\377bin' > data.bin && echo 'hello world' > keep.txt",
            ),
        ],
    ),
    (
        "rework it",
        [
            shell(
                "c3",
                "sed -i 's/hello/goodbye/' keep.txt && mv notes.md notes-old.md"
                " && rm -r out && chmod 755 keep.txt && printf '\\002\\003' >> data.bin",
            ),
            (
                "c4",
                "edit_file",
                {"path": "notes-old.md", "old_string": "first", "new_string": "2nd"},
            ),
        ],
    ),
    (
        "finish",
        [
            ("c5", "delete", {"path": "data.bin"}),
            ("c6", "write_file", {"path": "report/final.txt", "content": "done\n"}),
            shell(
                "c7",
                "python3 -c \"open('gen.csv','w').write('a,b\\n1,2\\n')\" && ln -s gen.csv latest",
            ),
        ],
    ),
]


def run_turns(hearth: Hearth, agent_for: Any, turns: list) -> tuple[str, list[Tree]]:
    """Run the turns (the first with ``hearth run``, the rest through ``/resume``); the
    workspace's tree at the start of each turn, and the one after the last."""
    ws = hearth.workspace
    states = [tree(ws)]
    session_id = ""
    for i, (prompt, calls) in enumerate(turns):
        replies = [calls_reply(API, call) for call in calls] + [text_reply(API, "Done.")]
        agent = agent_for(API, replies)
        if i == 0:
            result = agent.run("run", prompt, "--mode", "quest")
            assert result.code == 0, result.err
            (session_id,) = agent.session_ids()
        else:
            result = agent.run("--mode", "quest", input=f"/resume {session_id}\n{prompt}\n/quit\n")
            assert result.code == 0, result.err
        assert "Traceback" not in result.err
        states.append(tree(ws))
    return session_id, states


def test_rewind_to_each_turn_puts_every_path_back(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    (ws / "keep.txt").write_text("before anything\n")
    (ws / "untouched.txt").write_text("never changed\n")
    session_id, states = run_turns(hearth, agent_for, TURNS)
    assert states[1] != states[0] and states[2] != states[1] and states[3] != states[2]
    assert "out/deep/er/a.txt" in states[1] and "out" not in states[2]
    assert states[2]["keep.txt"][1] == 0o755

    listed = hearth.json("rewind", session_id, "--list")
    assert [t["turn"] for t in listed["turns"]] == [1, 2, 3]
    assert "keep.txt" in listed["turns"][1]["files"]

    for n in (3, 2, 1):
        dry = hearth.json("rewind", session_id, "--to", str(n), "--dry-run")
        assert tree(ws) == states[n], "a dry run changed nothing"
        assert dry["to_turn"] == n and dry["conversation"] is True
        assert not any(f["conflict"] for f in dry["files"])
        done = hearth.run("rewind", session_id, "--to", str(n))
        assert done.code == 0, done.err
        assert tree(ws) == states[n - 1], f"turn {n}"
    listed = hearth.json("rewind", session_id, "--list")
    assert [t["turn"] for t in listed["turns"]] == [None, None, None]
    assert all(t["undone"] for t in listed["turns"])


def test_dry_run_plan_shows_actions_and_diffs(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    (ws / "keep.txt").write_text("hello world\n")
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    plan = hearth.json("rewind", session_id, "--to", "2", "--dry-run")
    by_path = {f["path"]: f for f in plan["files"]}
    assert set(plan) == {"session_id", "to_turn", "files", "conversation"}
    assert by_path["keep.txt"]["action"] == "restore"
    assert "-goodbye world" in by_path["keep.txt"]["diff"]
    assert "+hello world" in by_path["keep.txt"]["diff"]
    assert by_path["notes.md"]["action"] == "create"
    assert by_path["notes-old.md"]["action"] == "delete"
    assert by_path["out/deep/er/a.txt"]["action"] == "create"
    assert by_path["data.bin"]["diff"] is None  # binary
    assert tree(ws) == states[2]


def test_a_file_changed_outside_the_task_is_a_conflict(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    (ws / "keep.txt").write_text("the user's own edit\n")
    refused = hearth.run("rewind", session_id, "--to", "2")
    assert refused.code != 0
    assert "keep.txt" in refused.err and "Traceback" not in refused.err
    assert len(refused.err_lines) == 1
    assert (ws / "keep.txt").read_text() == "the user's own edit\n"
    assert not (ws / "notes.md").exists(), "a refused rewind changes nothing"
    plan = hearth.json("rewind", session_id, "--to", "2", "--dry-run")
    assert [f["path"] for f in plan["files"] if f["conflict"]] == ["keep.txt"]

    forced = hearth.run("rewind", session_id, "--to", "2", "--force")
    assert forced.code == 0, forced.err
    assert tree(ws) == states[1]
    trashed = hearth.json("trash", "list")
    assert any(item["original"].endswith("keep.txt") for item in trashed)


def test_undo_puts_back_what_the_rewind_changed(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS)
    assert hearth.run("rewind", session_id, "--to", "2").code == 0
    assert tree(ws) == states[1]
    undone = hearth.run("rewind", session_id, "--undo")
    assert undone.code == 0, undone.err
    assert tree(ws) == states[3]
    listed = hearth.json("rewind", session_id, "--list")
    assert [t["turn"] for t in listed["turns"]] == [1, 2, 3]
    messages = hearth.run("resume", session_id, "--print-messages").json()["messages"]
    texts = [
        block["text"]
        for m in messages
        if m["role"] == "user"
        for block in m["content"]
        if block["type"] == "text"
    ]
    assert texts == ["set up the project", "rework it", "finish"]


def test_files_only_and_conversation_only(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    assert hearth.run("rewind", session_id, "--to", "2", "--conversation-only").code == 0
    assert tree(ws) == states[2], "the files stay"
    listed = hearth.json("rewind", session_id, "--list")
    assert [t["turn"] for t in listed["turns"]] == [1, None]
    # the files of the cut turn are still undone by going back further
    assert hearth.run("rewind", session_id, "--to", "1", "--files-only").code == 0
    assert tree(ws) == states[0]
    listed = hearth.json("rewind", session_id, "--list")
    assert [t["turn"] for t in listed["turns"]] == [1, None]
    assert listed["turns"][0]["files_undone"] is True


def test_bad_input_is_one_line(hearth: Hearth, agent_for) -> None:
    session_id, _states = run_turns(hearth, agent_for, TURNS[:1])
    for args in (
        ["--to", "9"],
        ["--to", "0"],
        [],
        ["--to", "1", "--undo"],
        ["--to", "1", "--files-only", "--conversation-only"],
        ["--undo"],
    ):
        done = hearth.run("rewind", session_id, *args)
        assert done.code != 0, args
        assert len(done.err_lines) == 1 and "Traceback" not in done.err, (args, done.err)
    missing = hearth.run("rewind", "nosuchsession", "--list")
    assert missing.code != 0 and len(missing.err_lines) == 1


def test_a_rewind_killed_at_every_step_is_completed_by_the_next(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS)
    plan = hearth.json("rewind", session_id, "--to", "2", "--dry-run")
    steps = ["journal", *(f"file-{i}" for i in range(1, len(plan["files"]) + 1)), "event"]
    assert len(steps) > 8
    for step in steps:
        killed = hearth.run(
            "rewind", session_id, "--to", "2", env={"HEARTH_TEST_REWIND_KILL_AT": step}
        )
        assert killed.code == -9, (step, killed.err)
        for rel, (kind, _mode, data) in tree(ws).items():  # every file whole: before or after
            if kind == "file" and not rel.endswith(
                f".hearth-rewind-{2 * steps.index(step) + 1}.tmp"
            ):
                assert data in {s.get(rel, ("", 0, None))[2] for s in states}, (step, rel)
        listed = hearth.run("rewind", session_id, "--list")  # completes the rewind
        assert listed.code == 0, listed.err
        assert tree(ws) == states[1], step
        with hearth.store().open(session_id) as session:
            rewinds = [e for e in session.events() if e["type"] == "rewind"]
        assert len(rewinds) == 2 * steps.index(step) + 1, step  # none twice, none lost
        undone = hearth.run("rewind", session_id, "--undo")
        assert undone.code == 0, (step, undone.err)
        assert tree(ws) == states[3], step


def test_after_a_rewind_the_next_prompt_is_that_turn_again(hearth: Hearth, agent_for) -> None:
    session_id, _states = run_turns(hearth, agent_for, TURNS[:2])
    assert hearth.run("rewind", session_id, "--to", "2").code == 0
    agent = agent_for(API, [text_reply(API, "Fine.")])
    again = agent.run("--mode", "quest", input=f"/resume {session_id}\nsomething else\n/quit\n")
    assert again.code == 0, again.err
    listed = hearth.json("rewind", session_id, "--list")["turns"]
    assert [(t["turn"], t["prompt"]) for t in listed] == [
        (1, "set up the project"),
        (None, "rework it"),
        (2, "something else"),
    ]
    # the model saw turn 1 and the new prompt, not the undone turn
    last = agent.fake.bodies[-1]["messages"]
    said = [m["content"] for m in last if m["role"] == "user"]
    assert "rework it" not in str(said) and "something else" in str(said)


def test_an_encrypted_sessions_checkpoints_hold_no_plaintext(hearth: Hearth, agent_for) -> None:
    from tests.e2e.test_agent_run import write_config

    key = hearth.home / "session.key"
    write_config(hearth, f'[encryption]\nenabled = true\nkey_file = "{key}"\n')
    ws = hearth.workspace
    marker = "PLAINTEXT-MARKER-7d41"
    (ws / "keep.txt").write_text(f"hello {marker}\n")
    turns = [
        ("change it", [shell("c1", f"echo '{marker} again' > secret-name.txt && rm keep.txt")]),
    ]
    session_id, states = run_turns(hearth, agent_for, turns)
    stored = [p for p in hearth.home.rglob("*") if p.is_file() and "checkpoints" in str(p)]
    assert stored, "checkpoints were kept"
    for p in stored:
        data = p.read_bytes()
        assert marker.encode() not in data and b"secret-name" not in data, p
        assert b"keep.txt" not in data, p
    assert hearth.run("rewind", session_id, "--to", "1").code == 0
    assert tree(ws) == states[0]


def test_a_rewind_is_refused_while_the_session_runs(hearth: Hearth, agent_for) -> None:
    session_id, states = run_turns(hearth, agent_for, TURNS[:1])
    with hearth.store().open(session_id) as session:
        session.writer()  # what a running task holds
        refused = hearth.run("rewind", session_id, "--to", "1")
    assert refused.code != 0 and len(refused.err_lines) == 1
    assert "running" in refused.err or "being written" in refused.err
    assert tree(hearth.workspace) == states[1]


def test_resume_completes_a_rewind_a_crash_cut_short(hearth: Hearth, agent_for) -> None:
    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    killed = hearth.run(
        "rewind", session_id, "--to", "2", env={"HEARTH_TEST_REWIND_KILL_AT": "file-2"}
    )
    assert killed.code == -9
    agent = agent_for(API, [text_reply(API, "Back at it.")])
    resumed = agent.run("resume", session_id, "--mode", "quest")
    assert resumed.code == 0, resumed.err
    assert tree(ws) == states[1]
    listed = hearth.json("rewind", session_id, "--list")["turns"]
    assert [t["turn"] for t in listed] == [1, None]


def test_summarize_leaves_a_summary_and_needs_a_model(hearth: Hearth, agent_for) -> None:
    session_id, _states = run_turns(hearth, agent_for, TURNS[:2])
    no_model = hearth.run("rewind", session_id, "--to", "2", "--summarize")
    assert no_model.code != 0 and len(no_model.err_lines) == 1
    assert "model" in no_model.err
    agent = agent_for(API, [text_reply(API, "They renamed notes.md and removed out/.")])
    done = agent.run("rewind", session_id, "--to", "2", "--summarize")
    assert done.code == 0, done.err
    messages = hearth.run("resume", session_id, "--print-messages").json()["messages"]
    assert "They renamed notes.md and removed out/." in str(messages[-1])


def test_the_library_rewinds_with_the_same_plan(hearth: Hearth, agent_for) -> None:
    from workhearth import Workhearth
    from workhearth.config import load_config

    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    wh = Workhearth(config=load_config({"HEARTH_HOME": str(hearth.home)}), workspace=ws)
    with wh.sessions.open(session_id) as session:
        plan = session.rewind(to=2, dry_run=True)
        assert plan == hearth.json("rewind", session_id, "--to", "2", "--dry-run")
        assert tree(ws) == states[2]
        done = session.rewind(to=2)
    assert done["to_turn"] == 2 and tree(ws) == states[1]


def test_the_mcp_tool_rewinds_with_the_same_plan(hearth: Hearth, agent_for) -> None:
    import anyio

    from mcp import Client
    from workhearth.config import load_config
    from workhearth.mcp.server.tools import build_server

    ws = hearth.workspace
    session_id, states = run_turns(hearth, agent_for, TURNS[:2])
    expected = hearth.json("rewind", session_id, "--to", "2", "--dry-run")
    (ws / "keep.txt").write_text("edited by the user\n")
    server = build_server(load_config({"HEARTH_HOME": str(hearth.home)}), ws)

    async def go() -> None:
        async with Client(server) as client:
            dry = await client.call_tool(
                "session_rewind", {"id": session_id, "to": 2, "dry_run": True}
            )
            plan = dry.structured_content
            assert [f["path"] for f in plan["files"] if f["conflict"]] == ["keep.txt"]
            assert {f["path"] for f in plan["files"]} == {f["path"] for f in expected["files"]}
            refused = await client.call_tool("session_rewind", {"id": session_id, "to": 2})
            assert refused.is_error and "keep.txt" in str(refused.content)
            done = await client.call_tool(
                "session_rewind", {"id": session_id, "to": 2, "force": True}
            )
            assert not done.is_error, done.content

    anyio.run(go)
    assert tree(ws) == states[1]


def test_the_audit_says_what_a_rewind_cannot_undo(hearth: Hearth, agent_for) -> None:
    turns = [("fetch it", [shell("c1", "curl --version > /dev/null 2>&1; echo ok > got.txt")])]
    session_id, _states = run_turns(hearth, agent_for, turns)
    records = hearth.json("audit")
    (ended,) = [r for r in records if r["call_id"] == "c1" and r["outcome"] != "started"]
    assert ended["reach"] == ["network (curl)"]
    messages = hearth.run("resume", session_id, "--print-messages").json()["messages"]
    assert "a rewind cannot undo" in str(messages) and "network (curl)" in str(messages)


def test_a_file_over_the_size_limit_is_named_not_lost(hearth: Hearth, agent_for) -> None:
    from tests.e2e.test_agent_run import write_config

    write_config(hearth, "[checkpoints]\nmax_file_mb = 1\n")
    ws = hearth.workspace
    (ws / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    turns = [("grow it", [shell("c1", "echo more >> big.bin && echo small > small.txt")])]
    session_id, states = run_turns(hearth, agent_for, turns)
    (turn,) = hearth.json("rewind", session_id, "--list")["turns"]
    assert turn["skipped"] == ["big.bin (larger than 1 MB)"]
    refused = hearth.run("rewind", session_id, "--to", "1")
    assert refused.code != 0 and "big.bin" in refused.err and len(refused.err_lines) == 1
    assert (ws / "small.txt").exists(), "a refused rewind changes nothing"
    forced = hearth.run("rewind", session_id, "--to", "1", "--force")
    assert forced.code == 0, forced.err
    assert not (ws / "small.txt").exists()
    assert (ws / "big.bin").read_bytes() == states[1]["big.bin"][2]  # left as it was


def test_a_workspace_too_big_to_keep_is_said_and_never_rewound_silently(
    hearth: Hearth, agent_for
) -> None:
    from tests.e2e.test_agent_run import write_config

    write_config(hearth, "[checkpoints]\nmax_total_mb = 1\n")
    ws = hearth.workspace
    (ws / "big.bin").write_bytes(b"y" * (2 * 1024 * 1024))
    turns = [("tidy", [shell("c1", "echo new > new.txt && rm big.bin")])]
    session_id, _states = run_turns(hearth, agent_for, turns)
    shown = hearth.run("sessions", "show", session_id)
    assert "no checkpoints for rewind in this run" in shown.out, shown.out
    (turn,) = hearth.json("rewind", session_id, "--list")["turns"]
    assert any("max_total_mb" in s for s in turn["skipped"]), turn
    refused = hearth.run("rewind", session_id, "--to", "1")
    assert refused.code != 0 and "max_total_mb" in refused.err
    assert (ws / "new.txt").exists() and not (ws / "big.bin").exists()
