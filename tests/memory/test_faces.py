"""``Memory`` with a team bank: any :class:`MemoryBank` will do, so a second home's
``Memory`` stands in for the server here (the real server: tests/bank/test_remote_bank.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.errors import NotFoundError
from workhearth.memory.api import Memory
from workhearth.memory.faces import MemoryBank
from workhearth.paths import HearthPaths


def _memory(root: Path, team_bank: MemoryBank | None = None) -> Memory:
    paths = HearthPaths(root / "home")
    return Memory(paths, root / "work", team_bank=team_bank)


def test_confirmed_sentences_go_to_the_team_bank_and_the_rest_stays_local(
    tmp_path: Path,
) -> None:
    team = _memory(tmp_path / "team")
    memory = _memory(tmp_path / "me", team)
    try:
        saved = memory.save("the staging database is reset every Monday", tags=["ops"])
        pending = memory.save("maybe: the cache is warmed at boot", pending=True)
        daily = memory.log_daily("looked at the staging cache today")
        assert [e.id for e in team.list()[0]] == [saved.id]
        assert {e.id for e in memory.list(layer="project")[0]} == {pending.id, daily.id}
        # Why context reads the local files only: a session starts offline.
        assert "Monday" not in memory.context() and "warmed" in memory.context()

        assert [e.id for e in memory.list()[0]] == [saved.id]
        hits = memory.search("staging cache Monday")
        assert saved.id in {h.entry_id for h in hits} and daily.id in {h.entry_id for h in hits}
        assert [h.entry_id for h in memory.search("Monday", layer="project")] == []

        memory.edit(saved.id, "the staging database is reset every Sunday")
        assert team.get(saved.id).content.endswith("Sunday")
        memory.delete(saved.id)
        assert team.list()[0] == []
        assert memory.restore(saved.id).id == saved.id and team.get(saved.id)
        memory.delete(pending.id)  # the local one, by its id
        assert pending.id not in {e.id for e in memory.list(layer="project")[0]}
        with pytest.raises(NotFoundError):
            memory.delete("m-00000000")
        assert memory.status()["bank"]["project"]["entries"] == 1
    finally:
        memory.close()


def test_without_a_team_bank_an_unknown_id_is_not_found(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    try:
        memory.save("one sentence")
        for change in (memory.delete, memory.restore):
            with pytest.raises(NotFoundError):
                change("m-00000000")
        assert "bank" not in memory.status()
    finally:
        memory.close()
