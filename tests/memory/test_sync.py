"""``Memory.sync``: a long-lived reader (``hearth serve``'s) sees every change on disk at its
next look, though it stats only the folders and files it knows while no folder changed."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workhearth import Workhearth
from workhearth.memory.api import Memory

HOUR_NS = 3600 * 10**9


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    w.memory.save("The printer is on floor two")
    yield w
    w.memory.close()


@pytest.fixture
def reader(wh: Workhearth) -> Iterator[Memory]:
    """A reader that catches up only when it syncs, as the server's event-loop reader."""
    memory = Memory(wh.config.paths, wh.workspace, wh.config.memory, autorefresh=False)
    yield memory
    memory.close()


def _age(*paths: Path) -> None:
    """Set back the mtime of ``paths`` by an hour: a look trusts them from then on."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - HOUR_NS))


def _settled(wh: Workhearth, reader: Memory, *extra: Path) -> Path:
    """The project folder (and ``extra``) aged, and the reader's look at it trusted."""
    folder = wh.memory.folder("project")
    _age(folder, *folder.glob("*.md"), folder / "memory_meta.json", *extra)
    reader.sync()
    assert reader.sync() is False  # nothing changed since: the cheap look
    return folder


def _texts(reader: Memory, q: str) -> list[str]:
    reader.sync()
    return [h.text for h in reader.search(q)]


def test_a_new_file_is_seen_by_the_next_look(wh: Workhearth, reader: Memory) -> None:
    folder = _settled(wh, reader)
    (folder / "notes.md").write_text("The walrus feeding is at noon.\n")
    assert _texts(reader, "walrus") == ["The walrus feeding is at noon."]


def test_a_new_file_in_a_subfolder_is_seen(wh: Workhearth, reader: Memory) -> None:
    daily = wh.memory.folder("project") / "daily"
    daily.mkdir()
    (daily / "2026-01-01.md").write_text("Met the pelican team.\n")
    _settled(wh, reader, daily, daily / "2026-01-01.md")
    (daily / "2026-01-02.md").write_text("The heron report is due.\n")
    assert _texts(reader, "heron") == ["The heron report is due."]
    (daily / "deeper").mkdir()
    (daily / "deeper" / "x.md").write_text("An ibex fact.\n")
    assert _texts(reader, "ibex") == ["An ibex fact."]


def test_a_removed_or_renamed_file_is_seen(wh: Workhearth, reader: Memory) -> None:
    folder = wh.memory.folder("project")
    (folder / "a.md").write_text("The yak shed is blue.\n")
    (folder / "b.md").write_text("The emu pen is red.\n")
    _settled(wh, reader)
    assert _texts(reader, "yak") and _texts(reader, "emu")
    (folder / "a.md").unlink()
    assert _texts(reader, "yak") == []
    (folder / "b.md").rename(folder / "c.md")
    assert [h.path for h in (reader.sync(), reader.search("emu"))[1]] == ["c.md"]


def test_an_atomic_replace_and_an_edit_in_place_are_seen(wh: Workhearth, reader: Memory) -> None:
    folder = _settled(wh, reader)
    path = folder / "MEMORY.md"
    tmp = folder / ".MEMORY.md.tmp"
    tmp.write_text(path.read_text().replace("printer", "scanner"))
    os.replace(tmp, path)
    assert _texts(reader, "scanner") and _texts(reader, "printer") == []
    _settled(wh, reader)
    with path.open("a") as f:
        f.write("\nThe kettle is in the hall.\n")
    assert _texts(reader, "kettle") == ["The kettle is in the hall."]


def test_a_folder_changed_in_the_tick_of_a_look_is_walked_again(
    wh: Workhearth, reader: Memory
) -> None:
    """The racy case: a name added without the folder's mtime moving (the same clock
    tick as the look); a folder whose mtime is not older than the look is not trusted."""
    folder = wh.memory.folder("project")
    ahead = time.time_ns() + 5 * 10**9  # "now", as far as the look can tell
    os.utime(folder, ns=(ahead, ahead))
    assert _texts(reader, "printer")
    (folder / "late.md").write_text("The lynx arrives late.\n")
    os.utime(folder, ns=(ahead, ahead))
    assert _texts(reader, "lynx") == ["The lynx arrives late."]


def test_a_layer_folder_made_after_the_first_look_is_seen(wh: Workhearth, reader: Memory) -> None:
    user = wh.memory.folder("user")
    assert not user.exists()
    _settled(wh, reader)
    user.mkdir(parents=True)
    (user / "USER.md").write_text("The user likes the okapi.\n")
    assert _texts(reader, "okapi") == ["The user likes the okapi."]
