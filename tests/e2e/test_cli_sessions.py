"""The real ``hearth`` command over sessions (DESIGN §3, §6, §8), in a temporary home."""

from __future__ import annotations

import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import Hearth, Result, chat, make_hearth, text, tree_digest

SECRET = "zebra-quartz-1871"
PW = {"HEARTH_PASSPHRASE": "pw"}


def assert_one_line_error(result: Result, *needles: str) -> str:
    """Non-zero exit, exactly one stderr line, nothing on stdout, no traceback anywhere."""
    assert result.code != 0, result
    assert "Traceback" not in result.out + result.err, result.err
    assert len(result.err_lines) == 1, result.err
    assert result.out == "", result.out
    line = result.err_lines[0]
    for needle in needles:
        assert needle.lower() in line.lower(), line
    return line


def texts_of(messages: list[dict[str, Any]]) -> list[str]:
    """The text blocks of canonical messages, in order."""
    return [b["text"] for m in messages for b in m["content"] if b.get("type") == "text"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(folder: Path) -> None:
    assert mode(folder) == 0o700
    assert mode(folder / "transcript.jsonl") == 0o600
    for path in folder.rglob("*"):
        assert not mode(path) & 0o077, f"{path} is {mode(path):o}"


# ------------------------------------------------------------------ no model


def test_doctor_works_on_an_empty_home(hearth: Hearth) -> None:
    plain = hearth.run("doctor")
    assert plain.code == 0, plain.err
    assert "workhearth" in plain.out and "model" in plain.out
    report = hearth.json("doctor")
    assert report["model"] is None
    assert report["sessions"] == 0
    assert report["home"] == str(hearth.home)
    assert Path(report["workspace"]).resolve() == hearth.workspace.resolve()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[quest]\nmax_step = 3\n", "[quest] has unknown keys: max_step"),
        ("[quest]\nmax_seconds = 0\n", "[quest] max_seconds must be a positive number"),
        ("[memory]\nproject_capacity = -1\n", "[memory] project_capacity"),
    ],
)
def test_doctor_reports_a_config_mistake_in_one_line(hearth: Hearth, text: str, said: str) -> None:
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.home / "config.toml").write_text(text)
    result = hearth.run("doctor")
    assert result.code != 0 and "Traceback" not in result.err
    (line,) = result.err_lines
    assert said in line and str(hearth.home / "config.toml") in line
    # Why: doctor is where a person looks when something is wrong; it still reports the rest.
    config_line = next(x for x in result.out.splitlines() if x.startswith("config"))
    assert said in config_line
    assert "sessions" in result.out and "storage" in result.out


def test_bare_hearth_without_a_model_says_how_to_configure_one(hearth: Hearth) -> None:
    line = assert_one_line_error(hearth.run(), "model")
    assert "OPENAI_API_KEY" in line or "HEARTH_MODEL" in line


# ---------------------------------------------------------------- lookup


def test_list_is_newest_first_with_the_contract_fields_from_any_folder(hearth: Hearth) -> None:
    other_ws = hearth.elsewhere / "project-b"
    ids = [
        hearth.seed(chat(2), title="first"),
        hearth.seed(chat(4), title="second", workspace=other_ws),
        hearth.seed(chat(3), title="third"),
    ]
    listed = hearth.json("sessions", "list", cwd=hearth.elsewhere)
    assert [s["session_id"] for s in listed] == ids[::-1]
    for row in listed:
        assert {"session_id", "workspace", "title", "messages", "updated"} <= row.keys()
    assert [(s["title"], s["messages"]) for s in listed] == [
        ("third", 3),
        ("second", 4),
        ("first", 2),
    ]
    assert [s["workspace"] for s in listed] == [
        str(hearth.workspace),
        str(other_ws),
        str(hearth.workspace),
    ]
    here = hearth.json("sessions", "list", "--here")
    assert [s["session_id"] for s in here] == [ids[2], ids[0]]


def test_show_clamps_count_and_latest_returns_the_newest_message(hearth: Hearth) -> None:
    sid = hearth.seed(chat(35))
    for count, returned in (("3", 3), ("0", 1), ("99", 30), (None, 10)):
        extra = ("--count", count) if count else ()
        data = hearth.json("sessions", "show", sid, *extra, cwd=hearth.elsewhere)
        assert (data["session_id"], data["total"], data["returned"]) == (sid, 35, returned)
        assert texts_of(data["messages"]) == [f"msg-{i}" for i in range(35 - returned, 35)]
    latest = hearth.json("sessions", "latest", sid, cwd=hearth.elsewhere)
    assert latest["session_id"] == sid
    assert latest["message"]["role"] == "user"
    assert texts_of([latest["message"]]) == ["msg-34"]


def test_show_and_latest_by_id_prefix_report_the_full_id(hearth: Hearth) -> None:
    sid = hearth.seed(chat(2))
    assert hearth.json("sessions", "show", sid[:20])["session_id"] == sid
    assert hearth.json("sessions", "latest", sid[:20])["session_id"] == sid


# ---------------------------------------------------------------- verify


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def tear(path: Path, other: Path) -> None:
    line = _lines(path)[2]
    _append(path, line[: len(line) // 2])  # a crash mid-write: half a line, no newline


def duplicate(path: Path, other: Path) -> None:
    _append(path, _lines(path)[2])


def zero_fill(path: Path, other: Path) -> None:
    lines = _lines(path)
    path.write_bytes(b"".join([*lines[:3], b"\x00" * 512 + b"\n", *lines[3:]]))


def foreign(path: Path, other: Path) -> None:
    _append(path, _lines(other)[2])


def everything(path: Path, other: Path) -> None:
    for damage in (zero_fill, duplicate, foreign, tear):  # torn must stay last
        damage(path, other)


DAMAGES: list[tuple[Callable[[Path, Path], None], dict[str, int]]] = [
    (tear, {"torn": 1}),
    (duplicate, {"duplicate": 1}),
    (zero_fill, {"nul": 1}),
    (foreign, {"foreign": 1}),
    (everything, {"torn": 1, "duplicate": 1, "nul": 1, "foreign": 1}),
]


def test_verify_passes_a_clean_session(hearth: Hearth) -> None:
    sid = hearth.seed(chat(6))
    report = hearth.json("sessions", "verify", sid, cwd=hearth.elsewhere)
    assert report["ok"] is True and report["messages"] == 6
    assert not any(report["damage"].values())
    plain = hearth.run("sessions", "verify", sid)
    assert plain.code == 0 and "ok" in plain.out


def damaged_session(hearth: Hearth, damage: Callable[[Path, Path], None]) -> str:
    sid = hearth.seed(chat(6))
    other = hearth.seed(chat(4, tag="other"))
    damage(hearth.transcript(sid), hearth.transcript(other))
    return sid


@pytest.mark.parametrize(("damage", "expected"), DAMAGES, ids=[d.__name__ for d, _ in DAMAGES])
def test_verify_reports_damage_and_still_loads_the_rest(
    hearth: Hearth, damage: Callable[[Path, Path], None], expected: dict[str, int]
) -> None:
    sid = damaged_session(hearth, damage)
    result = hearth.run("sessions", "verify", sid, "--json")
    assert "Traceback" not in result.err
    report = orjson.loads(result.out)
    assert report["ok"] is False
    assert {k: v for k, v in report["damage"].items() if v} == expected
    assert report["messages"] == 6
    shown = hearth.json("sessions", "show", sid, "--count", "30")
    assert texts_of(shown["messages"]) == [f"msg-{i}" for i in range(6)]


def test_verify_exits_1_on_a_damaged_session(hearth: Hearth) -> None:
    sid = damaged_session(hearth, everything)
    plain = hearth.run("sessions", "verify", sid)
    assert "damaged" in plain.out and "foreign 1" in plain.out
    assert plain.code == 1
    assert hearth.run("sessions", "verify", sid, "--json").code == 1


# ------------------------------------------------------------- delete/trash


def test_delete_goes_to_the_trash_and_restores_readable(hearth: Hearth) -> None:
    sid = hearth.seed(chat(4), title="keep me")
    folder = hearth.session_dir(sid)
    deleted = hearth.json("sessions", "delete", sid, cwd=hearth.elsewhere)
    assert deleted["session_id"] == sid
    assert not folder.exists()
    assert_one_line_error(hearth.run("sessions", "show", sid), sid)
    trashed = hearth.json("trash", "list")
    assert [(t["id"], t["session"], t["original"]) for t in trashed] == [
        (deleted["trash_id"], sid, str(folder))
    ]
    restored = hearth.run("trash", "restore", deleted["trash_id"])
    assert restored.code == 0, restored.err
    assert (folder / "transcript.jsonl").is_file()
    assert texts_of(hearth.json("sessions", "show", sid)["messages"]) == texts_of(chat(4))
    assert hearth.json("trash", "list") == []
    assert [s["title"] for s in hearth.json("sessions", "list")] == ["keep me"]


# ---------------------------------------------------------------- resume

INTERRUPTED = [
    text("user", "list the files"),
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_01", "name": "shell", "input": {"cmd": "ls"}},
        ],
    },
]


def resumed(hearth: Hearth, *args: str, fmt: str = "anthropic", **kw: Any) -> dict[str, Any]:
    data = hearth.run("resume", *args, "--print-messages", "--format", fmt, **kw).json()
    assert set(data) == {"system", "messages"}
    return data


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_resume_prints_messages_without_a_model_from_another_folder(
    hearth: Hearth, fmt: str
) -> None:
    sid = hearth.seed(chat(4))
    data = resumed(hearth, sid, fmt=fmt, cwd=hearth.elsewhere)
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"] * 2
    blob = orjson.dumps(data["messages"]).decode()
    assert all(f'msg-{i}"' in blob for i in range(4))
    if fmt == "openai":
        assert data["messages"][0]["content"] == "msg-0"
    else:
        assert data["messages"][0]["content"] == [{"type": "text", "text": "msg-0"}]


def test_resume_last_picks_the_newest_session_of_this_folder(hearth: Hearth) -> None:
    hearth.seed(chat(2, tag="older"))
    hearth.seed(chat(2, tag="newest-here"))
    hearth.seed(chat(2, tag="other-folder"), workspace=hearth.elsewhere)
    data = resumed(hearth, "--last")
    assert data["messages"][0]["content"] == [{"type": "text", "text": "newest-here-0"}]


def test_resume_closes_an_interrupted_tool_call(hearth: Hearth) -> None:
    sid = hearth.seed(INTERRUPTED)
    anthropic = resumed(hearth, sid)["messages"]
    assert anthropic[1]["content"][-1]["type"] == "tool_use"
    results = [b for b in anthropic[2]["content"] if b.get("type") == "tool_result"]
    assert anthropic[2]["role"] == "user"
    assert [r["tool_use_id"] for r in results] == ["toolu_01"]
    openai = resumed(hearth, sid, fmt="openai")["messages"]
    assert openai[1]["tool_calls"][0]["id"] == "toolu_01"
    tools = [m for m in openai if m["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == ["toolu_01"]
    assert tools[0]["content"]


# ---------------------------------------------------------------- export


@pytest.mark.parametrize(
    ("fmt", "marker"), [("jsonl", '"type":"message"'), ("markdown", "## user")]
)
def test_export_to_stdout_and_to_a_file(hearth: Hearth, fmt: str, marker: str) -> None:
    sid = hearth.seed(chat(4), title="exported")
    shown = hearth.run("sessions", "export", sid, "--format", fmt, cwd=hearth.elsewhere)
    assert shown.code == 0, shown.err
    assert marker in shown.out and "msg-3" in shown.out
    if fmt == "jsonl":
        events = [orjson.loads(line) for line in shown.out.splitlines()]
        assert [e["type"] for e in events] == ["meta"] + ["message"] * 4 + ["title"]
    else:
        assert "# exported" in shown.out
    written = hearth.run("sessions", "export", sid, "--format", fmt, "-o", "out.txt")
    assert written.code == 0, written.err
    assert (hearth.workspace / "out.txt").read_text() == shown.out


def test_bundle_imports_into_another_home_and_resumes_there(
    hearth: Hearth, hearth2: Hearth
) -> None:
    sid = hearth.seed(chat(5), title="travels")
    hearth.store().open(sid).write_tool_output("call_1", "tool said this")
    bundle = hearth.elsewhere / "s.bundle"
    made = hearth.run("sessions", "export", sid, "--format", "bundle", "-o", str(bundle))
    assert made.code == 0, made.err
    other = hearth2.elsewhere / "OTHERDIR"
    other.mkdir()
    imported = hearth2.json("sessions", "import", str(bundle), "--workspace", str(other))
    assert imported["session_id"] == sid
    assert imported["workspace"] == str(other)
    assert imported["messages"] == 5
    assert imported["sidechains"] == []
    assert_private(Path(imported["path"]))
    assert hearth2.store().open(sid).read_tool_output("call_1") == "tool said this"
    assert [s["workspace"] for s in hearth2.json("sessions", "list")] == [str(other)]
    before = hearth.json("sessions", "show", sid, "--count", "30")["messages"]
    assert hearth2.json("sessions", "show", sid, "--count", "30")["messages"] == before
    assert resumed(hearth2, "--last", cwd=other) == resumed(hearth, sid)


def test_encrypted_bundle_stays_sealed_and_needs_the_passphrase(
    hearth: Hearth, hearth2: Hearth
) -> None:
    enc = {"HEARTH_ENCRYPT": "1", **PW}
    sid = hearth.seed(
        [text("user", f"the secret is {SECRET}"), text("assistant", "noted")], env=enc
    )
    hearth.store(env=enc).open(sid).write_tool_output("call_1", f"found {SECRET}")
    assert hearth.json("sessions", "show", sid, env=PW)["total"] == 2
    for path in hearth.home.rglob("*"):
        assert path.is_dir() or SECRET.encode() not in path.read_bytes(), path
    bundle = hearth.elsewhere / "enc.bundle"
    made = hearth.run("sessions", "export", sid, "--format", "bundle", "-o", str(bundle), env=PW)
    assert made.code == 0, made.err
    assert SECRET.encode() not in bundle.read_bytes()
    with zipfile.ZipFile(bundle) as zf:
        for name in zf.namelist():
            assert SECRET.encode() not in zf.read(name), name
    imported = hearth2.json(
        "sessions", "import", str(bundle), "--workspace", str(hearth2.workspace), env=PW
    )
    assert imported["session_id"] == sid
    shown = hearth2.json("sessions", "show", sid, env=PW)
    assert texts_of(shown["messages"]) == [f"the secret is {SECRET}", "noted"]
    assert hearth2.store(env=PW).open(sid).read_tool_output("call_1") == f"found {SECRET}"
    before = tree_digest(hearth2.home)
    for args in (("sessions", "show", sid), ("resume", sid, "--print-messages")):
        wrong = hearth2.run(*args, env={"HEARTH_PASSPHRASE": "not-pw"})
        assert_one_line_error(wrong, "wrong key")
        assert SECRET not in wrong.err
        assert_one_line_error(hearth2.run(*args), "HEARTH_PASSPHRASE")
    assert tree_digest(hearth2.home) == before


# ------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def bad_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Hearth, dict[str, str]]:
    """One home with a plain and a key-file-encrypted session, each read once already."""
    root = tmp_path_factory.mktemp("bad")
    hearth = make_hearth(root)
    key = root / "keys" / "hearth.key"
    loose = root / "keys" / "loose.key"
    names = {
        "sid": hearth.seed(chat(3)),
        "enc": hearth.seed(chat(3), env={"HEARTH_ENCRYPT": "1", "HEARTH_KEY_FILE": str(key)}),
        "notjson": str(root / "notes.txt"),
        "missing": str(root / "no-such-file.jsonl"),
        "loose": str(loose),
        "folder": str(root / "keys"),
    }
    Path(names["notjson"]).write_text("this is not JSON at all\n{{{\n")
    shutil.copy(key, loose)
    loose.chmod(0o644)
    warm = hearth.run("sessions", "list", "--json", env={"HEARTH_KEY_FILE": str(key)})
    assert [s["messages"] for s in warm.json()] == [3, 3]
    return hearth, names


BAD_INPUT: list[tuple[str, str, dict[str, str]]] = [
    ("no-id", "sessions show", {}),
    ("unknown-id", "sessions show no-such-session", {}),
    ("resume-no-id", "resume --print-messages", {}),
    ("export-format", "sessions export {sid} --format pdf", {}),
    ("resume-format", "resume {sid} --print-messages --format gemini", {}),
    ("import-not-json", "sessions import {notjson}", {}),
    ("import-missing", "sessions import {missing}", {}),
    ("import-from", "sessions import {notjson} --from gemini-cli", {}),
    ("key-missing", "sessions show {enc}", {"HEARTH_KEY_FILE": "{missing}"}),
    ("key-0644", "sessions show {enc}", {"HEARTH_KEY_FILE": "{loose}"}),
    ("resume-key-0644", "resume {enc} --print-messages", {"HEARTH_KEY_FILE": "{loose}"}),
    ("count-abc", "sessions show {sid} --count abc", {}),
    ("unknown-option", "sessions list --bogus", {}),
    ("list-limit-0", "sessions list --limit 0", {}),
    ("import-a-folder", "sessions import {folder}", {}),
    ("list-limit-negative", "sessions list --limit -1", {}),
    ("audit-limit-negative", "audit --limit -3", {}),
]


@pytest.mark.parametrize(
    ("command", "env"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT]
)
def test_bad_input_is_one_line_and_changes_nothing(
    bad_home: tuple[Hearth, dict[str, str]], command: str, env: dict[str, str]
) -> None:
    hearth, names = bad_home
    before = tree_digest(hearth.home)
    args = [part.format(**names) for part in command.split()]
    result = hearth.run(*args, env={k: v.format(**names) for k, v in env.items()})
    assert_one_line_error(result)
    assert tree_digest(hearth.home) == before


# ------------------------------------------------------------- file modes


def test_session_folders_are_0700_and_files_0600(hearth: Hearth) -> None:
    sid = hearth.seed(chat(2))
    hearth.store().open(sid).write_tool_output("call_1", "tool said this")
    assert hearth.json("sessions", "show", sid)["total"] == 2
    folder = hearth.session_dir(sid)
    assert (folder / "tool-outputs" / "call_1.txt").is_file()
    assert_private(folder)
    report = hearth.json("sessions", "verify", sid)
    assert report["private"] is True
