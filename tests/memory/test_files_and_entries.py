"""Memory is plain Markdown (DESIGN §4): which files count, hand-written bytes, editor edits,
a rebuildable index and a damaged ``memory_meta.json``."""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import workhearth.memory.layer as layer_mod
from workhearth import Workhearth
from workhearth.errors import HearthError, NotFoundError

_stamps = itertools.count(1)


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    yield w
    w.memory.close()


def reopen(wh: Workhearth) -> Workhearth:
    """The same home and workspace as a new process sees them."""
    wh.memory.close()
    return Workhearth(home=wh.home, workspace=wh.workspace)


def folder(wh: Workhearth) -> Path:
    f = wh.memory.folder("project")
    f.mkdir(parents=True, exist_ok=True)
    return f


def editor_write(path: Path, data: bytes | str) -> None:
    """What an editor does: write the file and leave a newer mtime behind."""
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    stamp = time.time() + next(_stamps)
    os.utime(path, (stamp, stamp))


def meta_file(wh: Workhearth) -> dict:
    return json.loads((folder(wh) / "memory_meta.json").read_text())["entries"]


# ------------------------------------------------------------------ which files
def test_every_visible_md_file_is_memory_subfolders_included(wh: Workhearth) -> None:
    f = folder(wh)
    (f / "sub" / "deep").mkdir(parents=True)
    (f / "daily").mkdir()
    editor_write(f / "MEMORY.md", "# Memory\n\nzebrafact top level\n")
    editor_write(f / "sub" / "deep" / "notes.md", "zebrafact in a subfolder\n")
    editor_write(f / "daily" / "2024-01-02.md", "zebrafact in a daily log\n")
    editor_write(f / "notes.txt", "zebrafact in a text file\n")
    report = wh.memory.index()
    assert report.files_seen == 3
    paths = {h.path for h in wh.memory.search("zebrafact", limit=10)}
    assert paths == {"MEMORY.md", "sub/deep/notes.md", "daily/2024-01-02.md"}


@pytest.mark.parametrize(
    "rel", [".notes/x.md", ".reflection-bak/MEMORY.md", ".hidden.md", "sub/.private/y.md"]
)
def test_hidden_files_and_folders_are_not_memory(wh: Workhearth, rel: str) -> None:
    f = folder(wh)
    (f / rel).parent.mkdir(parents=True, exist_ok=True)
    editor_write(f / rel, "quokkahidden fact\n")
    editor_write(f / "MEMORY.md", "quokkavisible fact\n")
    assert wh.memory.index().files_seen == 1
    assert wh.memory.search("quokkahidden") == []
    assert [h.path for h in wh.memory.search("quokkavisible")] == ["MEMORY.md"]
    assert wh.memory.status()["project"]["files"] == 1


# ------------------------------------------------------- hand-written bytes
HAND = (
    "# Notes\n\n- a hand item without an id\n  its continuation, trailing spaces  \n\n"
    "Prose with 中文 and a tab\there.\n"
)


def test_hearth_gives_ids_only_to_its_entries_and_keeps_hand_written_bytes(
    wh: Workhearth,
) -> None:
    path = folder(wh) / "MEMORY.md"
    editor_write(path, HAND)
    first = wh.memory.save("hearth fact one")
    second = wh.memory.save("hearth fact two", level="critical")
    wh.memory.edit(first.id, "hearth fact one, edited")
    wh.memory.delete(second.id)
    data = path.read_text()
    assert data.startswith(HAND)
    rest = data[len(HAND) :].splitlines()
    assert [x for x in rest if x.strip()] == [f"- hearth fact one, edited ^{first.id}"]
    assert [e.id for e in wh.memory.list()[0]] == [first.id]
    (hand_hit,) = wh.memory.search("hand item without")
    assert hand_hit.entry_id is None


@pytest.mark.parametrize(
    "newline",
    [
        pytest.param("\r\n", id="crlf"),
        pytest.param("\u2028", id="unicode-line-separator"),
        pytest.param("\x0c", id="form-feed"),
    ],
)
def test_save_keeps_hand_written_line_endings(wh: Workhearth, newline: str) -> None:
    path = folder(wh) / "MEMORY.md"
    hand = f"# Notes{newline}first hand line{newline}second hand line{newline}".encode()
    editor_write(path, hand)
    wh.memory.save("a hearth entry")
    assert path.read_bytes().startswith(hand)


def test_save_into_a_non_utf8_hand_file_fails_cleanly(wh: Workhearth) -> None:
    path = folder(wh) / "MEMORY.md"
    hand = b"# Notes\ncaf\xe9 au lait\n"
    editor_write(path, hand)
    try:
        wh.memory.save("a hearth entry")
    except HearthError:
        pass
    assert path.read_bytes().startswith(hand)


def test_symlinked_memory_file_stays_a_link(wh: Workhearth, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "MEMORY.md"
    target.parent.mkdir()
    target.write_text("# Mine\n\nhand line\n")
    link = folder(wh) / "MEMORY.md"
    link.symlink_to(target)
    entry = wh.memory.save("saved through a link")
    assert link.is_symlink()
    assert f"^{entry.id}" in target.read_text()


def test_multi_paragraph_content_round_trips(wh: Workhearth) -> None:
    entry = wh.memory.save("first paragraph\n\nsecond paragraph")
    assert wh.memory.get(entry.id).content == "first paragraph\n\nsecond paragraph"


def test_multi_line_entry_round_trips(wh: Workhearth) -> None:
    entry = wh.memory.save("line one\nline two\n  indented three")
    again = reopen(wh).memory.get(entry.id)
    assert again.content == "line one\nline two\n  indented three"
    assert again.line == entry.line


# ------------------------------------------------------------ editor edits
def test_editor_edit_of_an_entry_is_obeyed_at_next_index(wh: Workhearth) -> None:
    entry = wh.memory.save("the deploy target is walrusserver", level="critical", tags=["ops"])
    path = folder(wh) / "MEMORY.md"
    editor_write(path, path.read_text().replace("walrusserver", "narwhalserver"))
    wh.memory.index()
    assert wh.memory.search("walrusserver") == []
    (hit,) = wh.memory.search("narwhalserver")
    assert (hit.entry_id, hit.level) == (entry.id, "critical")
    got = wh.memory.get(entry.id)
    assert (got.content, got.tags) == ("the deploy target is narwhalserver", ["ops"])


def test_editor_delete_of_an_entry_is_obeyed_and_its_meta_cleaned(wh: Workhearth) -> None:
    gone = wh.memory.save("an ibex fact to delete by hand")
    kept = wh.memory.save("a yak fact to keep")
    path = folder(wh) / "MEMORY.md"
    lines = [x for x in path.read_text().splitlines() if gone.id not in x]
    editor_write(path, "\n".join(lines) + "\n")
    wh.memory.index()
    assert [e.id for e in wh.memory.list()[0]] == [kept.id]
    assert set(meta_file(wh)) == {kept.id}
    assert wh.memory.search("ibex") == []
    with pytest.raises(NotFoundError):
        wh.memory.get(gone.id)


@pytest.mark.parametrize("by_rename", [False, True])
def test_editor_save_between_read_and_write_is_not_overwritten(
    wh: Workhearth, monkeypatch: pytest.MonkeyPatch, by_rename: bool
) -> None:
    path = folder(wh) / "MEMORY.md"
    editor_write(path, "# Memory\n\nfirst hand line\n")
    real = layer_mod.format_entry
    calls = []

    def editor_saves_meanwhile(content: str, entry_id: str) -> list[str]:
        # Why: runs after hearth read the file and before it writes to it.
        if not calls:
            data = path.read_text() + "typed in the editor meanwhile\n"
            if by_rename:  # an editor that saves a new file and renames it over the old
                editor_write(path.with_name(".MEMORY.md.swp"), data)
                os.replace(path.with_name(".MEMORY.md.swp"), path)
            else:
                editor_write(path, data)
        calls.append(entry_id)
        return real(content, entry_id)

    monkeypatch.setattr(layer_mod, "format_entry", editor_saves_meanwhile)
    entry = wh.memory.save("hearth's own fact")
    text = path.read_text()
    assert text.count("typed in the editor meanwhile") == 1
    assert text.count(f"^{entry.id}") == 1
    if by_rename:
        assert len(calls) >= 2  # hearth noticed and appended again to the editor's version
    assert wh.memory.get(entry.id).content == "hearth's own fact"


# ------------------------------------------------------------ the index
def _results(w: Workhearth, queries: list[str]) -> list[list[tuple]]:
    return [
        [
            (h.path, h.line_start, h.line_end, h.text, h.entry_id, h.level)
            for h in w.memory.search(q)
        ]
        for q in queries
    ]


@pytest.mark.parametrize("also_hash_state", [False, True])
def test_deleted_index_is_rebuilt_with_the_same_results(
    wh: Workhearth, also_hash_state: bool
) -> None:
    f = folder(wh)
    editor_write(f / "notes.md", "# Notes\n\nhand-written tapir notes\n会话记忆 by hand\n")
    ids = [wh.memory.save(f"tapir fact {i} 崩溃后可以恢复", level="low").id for i in range(5)]
    queries = ["tapir", "会话", "崩溃恢复", "fact 3"]
    before = _results(wh, queries)
    assert all(before)
    wh.memory.close()
    (f / ".index.sqlite").unlink()
    if also_hash_state:
        (f / "hash-state.json").unlink()
    again = Workhearth(home=wh.home, workspace=wh.workspace)
    assert _results(again, queries) == before
    assert sorted(e.id for e in again.memory.list()[0]) == sorted(ids)
    assert {again.memory.get(i).level for i in ids} == {"low"}
    again.memory.close()


def test_reindexing_reads_only_changed_files(wh: Workhearth) -> None:
    f = folder(wh)
    for name in ("a.md", "b.md", "c.md"):
        editor_write(f / name, f"notes in {name}\n")
    assert wh.memory.index().files_changed == 3
    assert wh.memory.index().files_changed == 0
    editor_write(f / "b.md", "new zebu notes in b\n")
    (f / "c.md").unlink()
    report = wh.memory.index()
    assert (report.files_changed, report.files_removed) == (1, 1)
    assert [h.path for h in wh.memory.search("zebu")] == ["b.md"]


def test_damaged_index_is_rebuilt(wh: Workhearth) -> None:
    entry = wh.memory.save("an okapi fact")
    wh.memory.close()
    f = folder(wh)
    for p in f.glob(".index.sqlite*"):
        p.unlink()
    (f / ".index.sqlite").write_bytes(b"not a database " * 200)
    again = Workhearth(home=wh.home, workspace=wh.workspace)
    assert [h.entry_id for h in again.memory.search("okapi")] == [entry.id]


def test_hit_text_is_whole_source_lines_under_700_chars(wh: Workhearth) -> None:
    lines = ["# Field notes"] + [f"note {i}: the heron {'x' * (i * 7)} line" for i in range(40)]
    editor_write(folder(wh) / "notes.md", "\n".join(lines) + "\n")
    hits = wh.memory.search("heron", limit=50)
    assert len(hits) > 3
    for h in hits:
        assert len(h.text) <= 700
        assert h.text == "\n".join(lines[h.line_start - 1 : h.line_end])


def test_hit_line_numbers_after_a_blank_line(wh: Workhearth) -> None:
    wh.memory.save("an entry first")
    path = folder(wh) / "MEMORY.md"
    editor_write(path, path.read_text() + "\nhand written platypus line\n")
    (hit,) = wh.memory.search("platypus")
    lines = path.read_text().splitlines()
    assert hit.text == "\n".join(lines[hit.line_start - 1 : hit.line_end])


# ------------------------------------------------------ damaged meta
def _three_entries(wh: Workhearth) -> dict[str, tuple[str, list[str]]]:
    want = {}
    for i, level in enumerate(("critical", "low", "normal")):
        e = wh.memory.save(f"gecko fact {i}", level=level, tags=[f"t{i}", "gecko"])
        want[e.id] = (level, [f"t{i}", "gecko"])
    return want


@pytest.mark.parametrize("keep", [0.3, 0.5, 0.8, 0.97])
def test_truncated_meta_keeps_complete_entries_and_reports_damage(
    wh: Workhearth, keep: float
) -> None:
    want = _three_entries(wh)
    path = folder(wh) / "memory_meta.json"
    raw = path.read_text()
    cut = int(len(raw) * keep)
    decoder = json.JSONDecoder()
    complete = set()
    for entry_id in want:
        start = raw.index(f'"{entry_id}": ') + len(f'"{entry_id}": ')
        if decoder.raw_decode(raw, start)[1] <= cut:
            complete.add(entry_id)
    path.write_text(raw[:cut])
    again = reopen(wh)
    status = again.memory.status()
    assert status["project"]["meta_damage"]
    for entry_id, (level, tags) in want.items():
        got = again.memory.get(entry_id)  # nothing in the Markdown is lost
        if entry_id in complete:
            assert (got.level, got.tags) == (level, tags)
    assert {e.id for e in again.memory.list()[0]} == set(want)


@pytest.mark.parametrize("garbage", [b"\x00\xff{{{ not json", b"[]", b'{"entries": 7}', b""])
def test_garbage_meta_does_not_crash(wh: Workhearth, garbage: bytes) -> None:
    want = _three_entries(wh)
    (folder(wh) / "memory_meta.json").write_bytes(garbage)
    again = reopen(wh)
    assert again.memory.status()["project"]["meta_damage"]
    assert {e.id for e in again.memory.list()[0]} == set(want)
    assert again.memory.search("gecko")
    assert again.memory.context(topic="gecko")


def test_meta_damage_is_still_reported_after_a_save(wh: Workhearth) -> None:
    _three_entries(wh)
    (folder(wh) / "memory_meta.json").write_bytes(b"{ garbage")
    again = reopen(wh)
    again.memory.search("gecko")
    again.memory.save("one more gecko fact")
    assert again.memory.status()["project"]["meta_damage"]


@pytest.mark.parametrize(
    "field,value", [("created", "yesterday"), ("level", ["critical"]), ("tags", 5)]
)
def test_meta_values_of_the_wrong_type_do_not_crash(
    wh: Workhearth, field: str, value: object
) -> None:
    entry = wh.memory.save("a gecko fact")
    path = folder(wh) / "memory_meta.json"
    data = json.loads(path.read_text())
    data["entries"][entry.id][field] = value
    path.write_text(json.dumps(data))
    again = reopen(wh)
    got = again.memory.get(entry.id)
    assert isinstance(got.created, float)
    assert got.level in ("critical", "normal", "low")
    assert isinstance(got.tags, list)
    assert [e.id for e in again.memory.list()[0]] == [entry.id]
    assert "gecko" in again.memory.context()


def test_meta_file_is_written_back_in_the_same_format(tmp_path: Path) -> None:
    """Entry meta is parsed once into ``EntryMeta``; saving writes the very same JSON."""
    import orjson

    from workhearth.memory.meta import EntryMeta, MetaStore

    stored = {
        "m-23456789": {
            "created": 1.5,
            "file": "MEMORY.md",
            "level": "critical",
            "pending": False,
            "provenance": [{"origin": "cli", "snippet": "s"}],
            "source": "user",
            "tags": ["tooling"],
            "updated": 2.5,
            "written_by": "a newer hearth",  # unknown keys survive
        },
        "m-3456789a": {
            "created": 3.0,
            "file": "daily/2026-12-01.md",
            "level": "normal",
            "pending": True,
            "provenance": [],
            "reflection": {"at": 4.0, "backup": "b"},
            "source": "reflection",
            "tags": [],
            "updated": 3.0,
        },
    }
    path = tmp_path / "memory_meta.json"
    raw = orjson.dumps(
        {"version": 1, "entries": stored}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    )
    path.write_bytes(raw)
    store = MetaStore(path)
    first = store.get("m-23456789")
    assert isinstance(first, EntryMeta)
    assert (first.level, first.tags, first.created, first.file) == (
        "critical",
        ["tooling"],
        1.5,
        "MEMORY.md",
    )
    assert store.level("m-3456789a") == "normal" and store.level(None) == "normal"
    second = store.get("m-3456789a")
    assert second is not None and second.pending and second.reflection == {"at": 4.0, "backup": "b"}
    store.save()
    assert path.read_bytes() == raw
