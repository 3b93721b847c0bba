"""A damaged line in a memory file (a NUL, bytes that are not UTF-8) hides only its own
entry; metadata is dropped only for entries verifiably gone (issue #17, DESIGN §4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from workhearth import Workhearth
from workhearth.memory.decode import decode_file, text_lines


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    yield w
    w.memory.close()


def meta_ids(wh: Workhearth) -> set[str]:
    path = wh.memory.folder("project") / "memory_meta.json"
    return set(json.loads(path.read_text())["entries"])


@pytest.mark.parametrize("damage", [b"\x00", b"\xff", b"\xc3"])
def test_the_entries_after_a_damaged_one_keep_their_line_numbers(
    wh: Workhearth, damage: bytes
) -> None:
    # Why accents: a file of UTF-8 text; in plain ASCII one high byte reads as Windows-1252.
    a = wh.memory.save("wombats dig burrows under the café")
    b = wh.memory.save("koalas sleep all day")
    c = wh.memory.save("quokkas smile at tourists in Perth, naïvely")
    path = wh.memory.folder("project") / "MEMORY.md"
    path.write_bytes(path.read_bytes().replace(b"koalas", b"ko" + damage + b"alas"))
    (hit,) = wh.memory.search("quokkas")
    assert (hit.entry_id, hit.line_start) == (c.id, c.line)
    assert [h.entry_id for h in wh.memory.search("wombats")] == [a.id]
    assert wh.memory.search("koalas") == []
    entries, _ = wh.memory.list()
    assert {e.id for e in entries} == {a.id, c.id}
    assert meta_ids(wh) == {a.id, b.id, c.id}


def test_a_legacy_file_with_one_accented_line_is_still_read_as_windows_1252() -> None:
    data = "plain line\nLe dessert préféré: crème brûlée\n".encode("cp1252")
    decoded = decode_file(data)
    assert decoded.encoding == "cp1252" and "crème brûlée" in (decoded.text or "")
    assert not decoded.damaged


def test_utf8_text_with_a_damaged_line_is_utf8_with_that_line_left_out() -> None:
    data = "第一行记忆\n".encode() + b"bad \xff byte\n" + "第三行记忆\n".encode()
    decoded = decode_file(data)
    assert decoded.encoding == "utf-8" and decoded.damaged == {1: "bad  byte"}
    assert text_lines(data) == ["第一行记忆", "", "第三行记忆"]
    assert "1 line skipped" in (decoded.note or "")


def test_a_save_killed_before_its_line_leaves_meta_that_the_next_index_drops(
    wh: Workhearth,
) -> None:
    kept = wh.memory.save("wombats dig burrows")
    gone = wh.memory.save("a line the user deletes in an editor")
    path = wh.memory.folder("project") / "MEMORY.md"
    lines = [x for x in path.read_text().splitlines() if gone.id not in x]
    path.write_text("\n".join(lines) + "\n")
    wh.memory.index()
    assert meta_ids(wh) == {kept.id}  # a text file without the entry: it is gone


def test_one_high_byte_in_an_ascii_file_reads_as_windows_1252_and_hides_nothing(
    wh: Workhearth,
) -> None:
    ids = {wh.memory.save(t).id for t in ("wombats dig", "koalas sleep", "quokkas smile")}
    path = wh.memory.folder("project") / "MEMORY.md"
    path.write_bytes(path.read_bytes().replace(b"koalas", b"ko\xffalas"))
    entries, _ = wh.memory.list()
    assert {e.id for e in entries} == ids
