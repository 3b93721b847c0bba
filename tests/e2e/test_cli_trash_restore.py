"""``hearth trash restore`` never writes through a folder that became a link out (DESIGN §5)."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.e2e.conftest import Hearth
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import SafeFS
from workhearth.config import load_config
from workhearth.trash import Trash


def _swap_for_link_out(hearth: Hearth) -> Path:
    sub = hearth.workspace / "sub"
    sub.rename(hearth.workspace / "sub.real")
    sub.symlink_to(hearth.elsewhere)
    return sub


def test_trash_restore_refuses_a_parent_now_a_link_out(hearth: Hearth) -> None:
    (hearth.workspace / "sub").mkdir()
    (hearth.workspace / "sub" / "plant.txt").write_text("fern\n")
    config = load_config({"HEARTH_HOME": str(hearth.home)})
    fs = SafeFS([hearth.workspace], trash=Trash(config.paths.trash), protected=[hearth.home])
    item = fs.delete("sub/plant.txt", session="s1")
    _swap_for_link_out(hearth)

    result = hearth.run("trash", "restore", item.id)

    assert result.code != 0
    assert len(result.err_lines) == 1 and "Traceback" not in result.err
    assert "sub is a link now" in result.err and "stays in the trash" in result.err
    assert list(hearth.elsewhere.iterdir()) == []
    listed = orjson.loads(hearth.run("trash", "list", "--json").out)
    assert [i["id"] for i in listed] == [item.id]


def test_file_history_restore_refuses_a_parent_now_a_link_out(hearth: Hearth) -> None:
    (hearth.workspace / "sub").mkdir()
    target = hearth.workspace / "sub" / "plant.txt"
    target.write_text("palm\n")
    session = hearth.store().create(model="openai:test-model")
    with session:
        FileHistory(session).save(str(target), b"fern\n", call_id="c1", replaced_by=b"palm\n")
    _swap_for_link_out(hearth)

    result = hearth.run("trash", "restore", "1", "--session", session.id)

    assert result.code != 0
    assert len(result.err_lines) == 1 and "Traceback" not in result.err
    assert "link" in result.err
    assert list(hearth.elsewhere.iterdir()) == []
