"""The real ``hearth memory`` command (DESIGN §4, §6) in a temporary home: JSON output,
Chinese text, and bad input that fails in one stderr line without touching a file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, Result, make_hearth, tree_digest
from workhearth import Workhearth
from workhearth.models.tokens import count_tokens


def one_line_error(result: Result) -> str:
    """Non-zero exit, exactly one stderr line, nothing on stdout, no traceback."""
    assert result.code != 0, result
    assert "Traceback" not in result.out + result.err, result.err
    assert len(result.err_lines) == 1, result.err
    assert result.out == "", result.out
    return result.err_lines[0]


def project_folder(hearth: Hearth) -> Path:
    (folder,) = hearth.home.glob("projects/*/awareness")
    return folder


def files_digest(hearth: Hearth) -> dict[str, str]:
    """Every file under the home except the index cache (SQLite may checkpoint it on open)."""
    return {k: v for k, v in tree_digest(hearth.home).items() if "/.index.sqlite" not in k}


def library(hearth: Hearth) -> Workhearth:
    """The same memory the command sees from the workspace folder."""
    return Workhearth(home=hearth.home, workspace=hearth.workspace)


def test_save_list_search_edit_delete_round_trip_in_chinese(hearth: Hearth) -> None:
    saved = hearth.json(
        "memory", "save", "会话记忆保存在 Markdown 文件里", "--level", "critical",
        "--tag", "记忆", "--tag", "design", "--snippet", "用户说：记住这个",
        "--session", "sess-1", "--message", "msg-7",
    )  # fmt: skip
    entry_id = saved["id"]
    assert saved["content"] == "会话记忆保存在 Markdown 文件里"
    assert (saved["level"], saved["tags"], saved["layer"]) == (
        "critical",
        ["记忆", "design"],
        "project",
    )
    assert saved["provenance"] == [
        {
            "snippet": "用户说：记住这个",
            "session_id": "sess-1",
            "message_id": "msg-7",
            "origin": "cli",
        }
    ]
    markdown = (project_folder(hearth) / "MEMORY.md").read_text(encoding="utf-8")
    assert f"- 会话记忆保存在 Markdown 文件里 ^{entry_id}" in markdown

    listed = hearth.json("memory", "list")
    assert [e["id"] for e in listed["entries"]] == [entry_id] and listed["next_cursor"] is None

    hits = hearth.json("memory", "search", "记忆")
    assert [h["entry_id"] for h in hits] == [entry_id]
    assert hits[0]["level"] == "critical" and hits[0]["score"] == 1.0

    edited = hearth.json("memory", "edit", entry_id, "崩溃后可以恢复会话")
    assert (edited["id"], edited["content"], edited["level"]) == (
        entry_id,
        "崩溃后可以恢复会话",
        "critical",
    )
    assert [h["entry_id"] for h in hearth.json("memory", "search", "崩溃恢复")] == [entry_id]
    assert hearth.json("memory", "search", "Markdown") == []

    assert hearth.json("memory", "delete", entry_id) == {"id": entry_id, "deleted": True}
    assert library(hearth).memory.list()[0] == []
    log = (project_folder(hearth) / ".memory_evicted.log").read_text(encoding="utf-8")
    (item,) = [json.loads(x) for x in log.splitlines()]
    assert (item["id"], item["content"]) == (entry_id, "崩溃后可以恢复会话")


def test_index_status_and_context_as_json(hearth: Hearth) -> None:
    wh = library(hearth)
    wh.memory.save("用户喜欢简短的回答", layer="user", level="critical")
    for i in range(3):
        wh.memory.save(f"项目笔记 {i}: 部署到 staging", level=("low", "normal", "critical")[i])
    (wh.memory.folder("project") / "notes.md").write_text(
        "# 手写\n\n手写的笔记\n", encoding="utf-8"
    )

    report = hearth.json("memory", "index")
    assert report["files_seen"] == 3 and report["files_changed"] >= 1
    assert report["chunks"] == 5

    status = hearth.json("memory", "status")
    assert status["project"]["entries"] == 3 and status["project"]["files"] == 2
    assert status["user"]["entries"] == 1 and status["project"]["meta_damage"] is None
    assert status["project"]["tokens"] > 0 and status["project"]["capacity"] == 200_000

    ctx = hearth.json("memory", "context", "--topic", "部署", "--budget", "1000")
    assert ctx["tokens"] == count_tokens(ctx["context"])
    text = ctx["context"]
    assert "用户喜欢简短的回答" in text and "手写的笔记" in text
    order = [text.index(f"项目笔记 {i}") for i in (2, 1, 0)]
    assert order == sorted(order)  # critical, normal, low


def test_list_pages_with_the_cursor(hearth: Hearth) -> None:
    wh = library(hearth)
    ids = [wh.memory.save(f"fact {i}").id for i in range(5)]
    seen, cursor = [], None
    while True:
        page = hearth.json(
            "memory", "list", "--limit", "3", *(["--cursor", cursor] if cursor else [])
        )
        seen += [e["id"] for e in page["entries"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]


def test_human_output_is_readable(hearth: Hearth) -> None:
    saved = hearth.run("memory", "save", "记住：周五发布")
    assert saved.code == 0 and saved.out.startswith("saved m-"), saved.err
    found = hearth.run("memory", "search", "周五")
    assert found.code == 0 and "记住：周五发布" in found.out


SECRET = "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"
NOT_UTF8 = os.fsdecode(b"caf\xff au lait")  # how Python hands over argv bytes that are not UTF-8
BAD = {
    "secret in content": ["save", f"my key is {SECRET}"],
    "secret in snippet": ["save", "a fact", "--snippet", f"key {SECRET}"],
    "secret in edit": ["edit", "{id}", f"now {SECRET}"],
    "unknown id edit": ["edit", "m-zzzzzzzz", "new text"],
    "unknown id delete": ["delete", "m-zzzzzzzz"],
    "bogus level": ["save", "a fact", "--level", "bogus"],
    "empty content": ["save", "   "],
    "tag too long": ["save", "a fact", "--tag", "t" * 65],
    "query too long": ["search", "q" * 513],
    "search limit 0": ["search", "fact", "--limit", "0"],
    "list limit 0": ["list", "--limit", "0"],
    "list limit 101": ["list", "--limit", "101"],
    "bad cursor": ["list", "--cursor", "garbage!!"],
    "zero budget": ["context", "--budget", "0"],
    "limit not a number": ["list", "--limit", "many"],
    "save not utf-8": ["save", NOT_UTF8],
    "search not utf-8": ["search", NOT_UTF8],
}


@dataclass
class Outcome:
    result: Result
    before: dict[str, str]
    after: dict[str, str]


@pytest.fixture(scope="module")
def bad_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every bad command, each in its own home holding one entry, run side by side."""

    def one(case: str) -> Outcome:
        h = make_hearth(tmp_path_factory.mktemp("bad"))
        wh = library(h)
        entry = wh.memory.save("an existing fact")
        # Why: a file modified under 2 s before indexing is hashed again by the next
        # read, which rewrites hash-state.json; under load that read comes later.
        for md in h.home.rglob("*.md"):
            os.utime(md, (md.stat().st_atime, md.stat().st_mtime - 10))
        wh.memory.index()
        wh.memory.close()
        before = files_digest(h)
        result = h.run("memory", *[a.replace("{id}", entry.id) for a in BAD[case]], "--json")
        return Outcome(result, before, files_digest(h))

    # Why: each run is a fresh interpreter; side by side they cost seconds, not a minute.
    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(BAD, pool.map(one, BAD), strict=True))


@pytest.mark.parametrize("case", BAD)
def test_bad_input_fails_in_one_line_and_changes_nothing(
    bad_outcomes: dict[str, Outcome], case: str
) -> None:
    outcome = bad_outcomes[case]
    line = one_line_error(outcome.result)
    assert line.startswith("hearth: ") and SECRET not in line
    assert outcome.after == outcome.before


# ------------------------------------------------------------ a read-only home
@contextlib.contextmanager
def _read_only(h: Hearth) -> Iterator[Hearth]:
    """``h`` with its home seen through a read-only bind mount (root ignores mode 0555).

    Skips the test, with the reason, where a bind mount cannot be made.
    """
    view = h.home.parent / "home-read-only"
    view.mkdir()
    made = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(h.home), str(view)], capture_output=True, text=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount here: {made.stderr.strip()}")
    try:
        with pytest.raises(OSError):
            (view / ".write-probe").write_text("x")
        yield replace(h, home=view, env={**h.env, "HEARTH_HOME": str(view)})
    finally:
        if subprocess.run(["umount", str(view)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(view)], capture_output=True)


def _reading_commands(h: Hearth) -> dict[str, object]:
    status = h.json("memory", "status")
    for layer in ("user", "project", "wiki"):
        status[layer]["folder"] = Path(status[layer]["folder"]).relative_to(h.home).as_posix()
    return {
        "search": h.json("memory", "search", "tapir afternoon"),
        "search_zh": h.json("memory", "search", "记忆"),
        "list": h.json("memory", "list"),
        "status": status,
        "context": h.json("memory", "context", "--topic", "tapir"),
    }


def test_reading_commands_work_on_a_read_only_home(hearth: Hearth) -> None:
    wh = library(hearth)
    wh.memory.save("the tapir sleeps in the afternoon", level="critical")
    wh.memory.save("用户喜欢简短的回答", layer="user")
    (wh.memory.folder("project") / "notes.md").write_text(
        "# Notes\n\n会话记忆 written by hand\n", encoding="utf-8"
    )
    wh.memory.close()
    expected = _reading_commands(hearth)  # on the writable home, which builds the index
    assert expected["search"][0]["text"].startswith("- the tapir sleeps")
    assert len(expected["list"]["entries"]) == 2
    # Why: a home whose index was never built (or was deleted) must read just as well.
    for name in (".index.sqlite", ".index.sqlite-wal", ".index.sqlite-shm", "hash-state.json"):
        (wh.memory.folder("user") / name).unlink(missing_ok=True)
    before = files_digest(hearth)

    with _read_only(hearth) as ro:
        got = _reading_commands(ro)
    assert got == expected
    assert files_digest(hearth) == before


def test_files_in_other_encodings_are_read_and_binary_ones_skipped(hearth: Hearth) -> None:
    """Issue #9: random bytes were indexed and injected, UTF-16 went in NUL-filled,
    Latin-1 showed U+FFFD. Text in any usual encoding is found; binary is named, never used."""
    import random

    assert hearth.run("memory", "save", "The deploy target is staging.").code == 0
    folder = project_folder(hearth)
    files = {
        "garbage.md": random.Random(9).randbytes(6000),
        "notepad.md": "# Notes\n\nThe cluster is called zephyr.\n".encode("utf-16"),
        "bom.md": "\ufeffThe printer is named quokka.\n".encode(),
        "legacy.md": "Le dessert préféré: crème brûlée, 3 €.\n".encode("cp1252"),
        "escapes.md": b"Coloured \x1b[31mwombat\x1b[0m output\x07 here.\n",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)

    found = hearth.json("memory", "search", "zephyr")
    assert [h["path"] for h in found] == ["notepad.md"]
    assert "zephyr" in found[0]["text"] and "\x00" not in found[0]["text"]
    assert [h["path"] for h in hearth.json("memory", "search", "quokka")] == ["bom.md"]
    legacy = hearth.json("memory", "search", "brûlée")
    assert [h["path"] for h in legacy] == ["legacy.md"]
    assert "crème brûlée, 3 €" in legacy[0]["text"]

    context = hearth.json("memory", "context")["context"]
    assert "zephyr" in context and "wombat" in context and "crème brûlée" in context
    bad = [c for c in context if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert bad == [] and "\ufffd" not in context
    assert "garbage.md" not in context

    status = hearth.json("memory", "status")["project"]
    assert [s["path"] for s in status["skipped"]] == ["garbage.md"]
    assert {d["path"] for d in status["decoded"]} == {"notepad.md", "legacy.md"}
    human = hearth.run("memory", "status")
    assert "skipped: project:garbage.md" in human.out
    assert "legacy.md: not UTF-8: read as Windows-1252" in human.out
    doctor = hearth.run("doctor")
    (line,) = [x for x in doctor.out.splitlines() if x.startswith("memory ")]
    assert "project:garbage.md" in line

    # Hearth never rewrites a file the user wrote.
    for name, data in files.items():
        assert (folder / name).read_bytes() == data


def test_saving_the_same_text_twice_returns_the_existing_entry(hearth: Hearth) -> None:
    first = hearth.json("memory", "save", "Builds run with uv.")
    again = hearth.json("memory", "save", "  Builds run with uv.  ")
    assert again == first
    human = hearth.run("memory", "save", "Builds run with uv.")
    assert human.code == 0 and human.out.startswith(f"already saved as {first['id']} ")
    assert len(hearth.json("memory", "list")["entries"]) == 1
    text = (project_folder(hearth) / "MEMORY.md").read_text()
    assert text.count("Builds run with uv.") == 1


def test_tags_are_shown_listed_and_searchable(hearth: Hearth) -> None:
    tagged = hearth.json("memory", "save", "Prefer ruff over flake8.", "--tag", "tooling")
    hearth.json("memory", "save", "The office is in Lyon.", "--tag", "place")
    hits = hearth.json("memory", "search", "tooling")
    assert [h["entry_id"] for h in hits] == [tagged["id"]] and hits[0]["tags"] == ["tooling"]
    human = hearth.run("memory", "search", "tooling")
    assert "#tooling" in human.out and "Prefer ruff" in human.out
    listed = hearth.json("memory", "list", "--tag", "tooling")["entries"]
    assert [e["id"] for e in listed] == [tagged["id"]]
    assert hearth.json("memory", "list", "--tag", "nothing")["entries"] == []
    table = hearth.run("memory", "list").out
    assert " tags " in table and "tooling" in table


def test_a_deleted_entry_can_be_restored_under_its_id(hearth: Hearth) -> None:
    saved = hearth.json(
        "memory", "save", "Staging lives at stage.example.org.", "--level", "critical"
    )
    assert hearth.run("memory", "delete", saved["id"]).code == 0
    assert hearth.json("memory", "search", "stage.example.org") == []
    back = hearth.run("memory", "restore", saved["id"])
    assert back.code == 0, back.err
    assert back.out.startswith(f"restored {saved['id']} to project:MEMORY.md")
    (hit,) = hearth.json("memory", "search", "stage.example.org")
    assert hit["entry_id"] == saved["id"] and hit["level"] == "critical"
    again = hearth.run("memory", "restore", saved["id"])
    assert "is not deleted" in one_line_error(again)
    assert "no deleted or evicted" in one_line_error(hearth.run("memory", "restore", "m-22222222"))


def _fake_model_env(url: str) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "sk-test-dummy",
        "HEARTH_MODEL": "openai:qwen-plus",
    }


def test_reflect_that_aborts_exits_non_zero_and_rollback_is_reachable(hearth: Hearth) -> None:
    from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text

    for i in range(6):
        hearth.json("memory", "save", f"Fact number {i}: the service {i} listens on port 80{i}.")
    memory_md = project_folder(hearth) / "MEMORY.md"
    before = memory_md.read_bytes()
    # A rewrite that keeps far under 65 % of the tokens: the guard aborts it.
    with FakeProvider([Reply(pieces=openai_sse(openai_text(["# Memory\n\n- Ports.\n"])))]) as fake:
        done = hearth.run("memory", "reflect", env=_fake_model_env(fake.url))
    assert done.code != 0 and "Traceback" not in done.err
    assert len(done.err_lines) == 1 and "reflection aborted" in done.err_lines[0], done.err
    assert memory_md.read_bytes() == before

    # A rewrite that keeps enough is applied; --rollback brings the file back.
    kept = before.decode().replace("Fact number 0", "Fact zero")
    with FakeProvider([Reply(pieces=openai_sse(openai_text([kept])))]) as fake:
        done = hearth.run("memory", "reflect", env=_fake_model_env(fake.url))
    assert done.code == 0, done.err
    assert memory_md.read_bytes() != before
    undone = hearth.run("memory", "reflect", "--rollback")
    assert undone.code == 0, undone.err
    assert "restored" in undone.out
    assert memory_md.read_bytes() == before


def _run_with_an_old_daily_log(
    hearth: Hearth, wait: float, interactive: bool = False
) -> tuple[Path, Path, int]:
    """``hearth run`` (or an interactive ``hearth`` fed one prompt) against a fake model,
    with a daily log of 2020 in the project layer.

    Returns (the log, MEMORY.md, requests the fake model got) once the log is gone
    or ``wait`` seconds have passed.
    """
    import time

    from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text

    hearth.json("memory", "save", "The team meets on Mondays.")
    folder = project_folder(hearth)
    log = folder / "daily" / "2020-01-01.md"
    log.parent.mkdir()
    log.write_text("# 2020-01-01\n\n- Met Bob: the zeta release ships in May.\n")
    replies = [
        Reply(pieces=openai_sse(openai_text(["All done."]))),
        Reply(pieces=openai_sse(openai_text(["- The zeta release ships in May.\n"]))),
    ]
    with FakeProvider(replies) as fake:
        if interactive:
            done = hearth.run(env=_fake_model_env(fake.url), input="say hello\n/quit\n")
        else:
            done = hearth.run("run", "say hello", env=_fake_model_env(fake.url))
        assert done.code == 0, done.err
        assert "All done." in done.out
        deadline = time.monotonic() + wait
        while log.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # Why: let a child that is still writing finish before the server stops
        requests = len(fake.received)
    return log, folder / "MEMORY.md", requests


def test_a_finished_run_distills_old_daily_logs_in_the_background(hearth: Hearth) -> None:
    log, memory_md, requests = _run_with_an_old_daily_log(hearth, wait=45)
    assert not log.exists(), "the old daily log was not distilled after the run"
    assert "The zeta release ships in May." in memory_md.read_text()
    assert requests >= 2
    (hit,) = hearth.json("memory", "search", "zeta release")
    assert hit["path"] == "MEMORY.md"


def test_an_interactive_session_distills_old_daily_logs_when_it_ends(hearth: Hearth) -> None:
    log, memory_md, _requests = _run_with_an_old_daily_log(hearth, wait=45, interactive=True)
    assert not log.exists(), "the old daily log was not distilled after the interactive session"
    assert "The zeta release ships in May." in memory_md.read_text()


def test_manual_maintenance_leaves_daily_logs_alone_after_a_run(hearth: Hearth) -> None:
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.home / "config.toml").write_text('[memory]\nmaintenance = "manual"\n')
    log, memory_md, requests = _run_with_an_old_daily_log(hearth, wait=3)
    assert log.exists() and "zeta" not in memory_md.read_text()
    assert requests == 1
