"""Reflection guards (DESIGN §4), each tripped on purpose with a scripted model."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from workhearth.app import Workhearth
from workhearth.errors import ConfigError
from workhearth.memory import reflect as reflection
from workhearth.memory.entries import find_entries
from workhearth.models.messages import Message
from workhearth.models.scripted import ScriptedModel

NOW = datetime(2025, 3, 10, 10, 0).timestamp()  # local time, like the daily file names
FACTS = [
    "The build uses hatchling and the package lives under src.",
    "Tests run with pytest from the project virtualenv.",
    "The user prefers short commit messages in the imperative mood.",
    "Session transcripts are append-only JSONL files, fsynced per turn.",
    "Memory search uses SQLite FTS5 with the trigram tokenizer.",
    "The CLI prints one clear line on stderr for every user error.",
]


def make_hearth(root: Path, config: str = "") -> Workhearth:
    home = root / "home"
    home.mkdir(parents=True)
    if config:
        (home / "config.toml").write_text(config, encoding="utf-8")
    # Why: env={} keeps a model or setting from the developer's shell out of the test.
    return Workhearth(home=home, workspace=root / "ws", env={})


@pytest.fixture
def wh(tmp_path: Path):
    hearth = make_hearth(tmp_path)
    yield hearth
    hearth.memory.close()


def folder(wh: Workhearth) -> Path:
    return wh.memory.folder("project")


def memory_file(wh: Workhearth) -> Path:
    return folder(wh) / "MEMORY.md"


def meta(wh: Workhearth) -> dict[str, dict]:
    return orjson.loads((folder(wh) / "memory_meta.json").read_bytes())["entries"]


def evicted(wh: Workhearth) -> list[dict]:
    path = folder(wh) / ".memory_evicted.log"
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def save_facts(wh: Workhearth, facts: list[str] = FACTS) -> list[str]:
    return [
        wh.memory.save(f, level="critical" if i == 0 else "normal", tags=[f"t{i}"]).id
        for i, f in enumerate(facts)
    ]


def keeping(
    wh: Workhearth, keep: list[str], new: list[str] = ()
) -> Callable[[str | None, list[Message]], str]:
    """A scripted reply that keeps the entries ``keep`` (by id) and adds ``new`` lines."""

    def reply(_system: str | None, _messages: list[Message]) -> str:
        spans = find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())
        lines = [f"- {spans[i].content} ^{i}" for i in keep] + [f"- {n}" for n in new]
        return "\n".join(lines)

    return reply


def keep_all(wh: Workhearth) -> Callable[[str | None, list[Message]], str]:
    """A scripted reply that keeps every entry of MEMORY.md as it is."""

    def reply(system: str | None, messages: list[Message]) -> str:
        ids = find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())
        return keeping(wh, list(ids))(system, messages)

    return reply


def outcome_for(report: reflection.ReflectionReport, file: str) -> reflection.Outcome:
    (found,) = [o for o in report.outcomes if o.file == file]
    return found


# ------------------------------------------------------------------ scripted model
def test_scripted_model_fails_on_extra_calls_and_unused_steps() -> None:
    model = ScriptedModel(["one"])
    assert model.complete(None, [])["content"][0]["text"] == "one"
    with pytest.raises(AssertionError, match="called 2 times"):
        model.complete("sys", [])
    assert [r.system for r in model.requests] == [None, "sys"]
    with pytest.raises(AssertionError, match="1 scripted step"):
        ScriptedModel(["unused"]).assert_done()


# ------------------------------------------------------------------ periodic rewrite
def test_backup_is_written_before_the_model_sees_the_file(wh: Workhearth) -> None:
    ids = save_facts(wh)
    original = memory_file(wh).read_bytes()
    seen: list[Path] = []

    def check_backup(system: str | None, messages: list[Message]) -> str:
        backups = sorted((folder(wh) / ".reflection-bak").glob("MEMORY.md.*Z"))
        assert [b.read_bytes() for b in backups] == [original]
        seen.extend(backups)
        return keeping(wh, ids)(system, messages)

    model = ScriptedModel([check_backup])
    report = wh.memory.reflect(model, layer="project")
    model.assert_done()
    out = outcome_for(report, "MEMORY.md")
    assert out.action == "unchanged"
    assert folder(wh) / out.backup == seen[0]
    sidecar = orjson.loads(seen[0].with_name(seen[0].name + ".json").read_bytes())
    assert sidecar["file"] == "MEMORY.md" and set(sidecar["entries"]) == set(ids)


def test_rewrite_keeping_under_65_percent_is_aborted_and_file_unchanged(wh: Workhearth) -> None:
    ids = save_facts(wh)
    before, meta_before = memory_file(wh).read_bytes(), meta(wh)
    model = ScriptedModel([keeping(wh, ids[:2])])  # 2 of 6 similar facts: about a third
    out = outcome_for(wh.memory.reflect(model), "MEMORY.md")
    model.assert_done()
    assert out.action == "aborted"
    assert "65%" in out.reason and out.tokens_after < 0.65 * out.tokens_before
    assert memory_file(wh).read_bytes() == before
    assert meta(wh) == meta_before
    assert evicted(wh) == []
    assert (folder(wh) / out.backup).read_bytes() == before  # the backup stays all the same


def test_dropped_entries_are_logged_and_survivors_keep_id_and_meta(wh: Workhearth) -> None:
    ids = save_facts(wh)
    dup = wh.memory.save("Tests are run with pytest from the project's virtualenv.").id
    meta_before = meta(wh)
    merged = "Session transcripts are append-only JSONL files fsynced once per turn."
    model = ScriptedModel(
        [keeping(wh, [i for i in ids if i != ids[3]], new=[merged])]  # drop ids[3] and dup
    )
    out = outcome_for(wh.memory.reflect(model), "MEMORY.md")
    model.assert_done()
    assert out.action == "rewritten", out.reason
    assert sorted(out.dropped) == sorted([ids[3], dup])
    (new_id,) = out.added

    spans = find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())
    assert set(spans) == {*ids, new_id} - {ids[3]}
    after = meta(wh)
    for i in set(ids) - {ids[3]}:
        assert after[i] == meta_before[i]  # untouched survivors keep their meta exactly
    assert after[new_id]["source"] == "reflection"
    assert after[new_id]["reflection"]["backup"] == out.backup
    assert ids[3] not in after and dup not in after

    log = {item["id"]: item for item in evicted(wh)}
    assert set(log) == {ids[3], dup}
    assert {item["reason"] for item in log.values()} == {"reflection"}
    assert log[ids[3]]["content"] == FACTS[3]
    assert log[ids[3]]["meta"] == meta_before[ids[3]]
    assert wh.memory.search("fsynced once per turn")[0].entry_id == new_id


def test_reworded_survivor_keeps_level_tags_and_created(wh: Workhearth) -> None:
    ids = save_facts(wh)
    meta_before = meta(wh)
    spans = find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())
    reply = "\n".join(
        f"- {'The package is built with hatchling from src/.' if i == ids[0] else spans[i].content} ^{i}."
        for i in ids
    )
    out = outcome_for(wh.memory.reflect(ScriptedModel([reply])), "MEMORY.md")
    assert out.action == "rewritten" and out.added == [] and out.dropped == []
    entry = wh.memory.get(ids[0])
    assert entry.content == "The package is built with hatchling from src/."
    assert (entry.level, entry.tags, entry.created) == (
        "critical",
        ["t0"],
        meta_before[ids[0]]["created"],
    )


def test_hand_written_lines_are_never_rewritten(wh: Workhearth) -> None:
    ids = save_facts(wh)
    path = memory_file(wh)
    path.write_text(
        path.read_text(encoding="utf-8") + "\n## Notes\n\n- My own note, no id.\n", "utf-8"
    )
    # The model repeats the hand-written line and drops nothing else.
    model = ScriptedModel([keeping(wh, ids, new=["My own note, no id."])])
    out = outcome_for(wh.memory.reflect(model), "MEMORY.md")
    assert out.action == "unchanged" and out.added == []
    assert path.read_text(encoding="utf-8").count("My own note, no id.") == 1


def test_rewrite_aborts_when_the_file_changes_while_the_model_works(wh: Workhearth) -> None:
    ids = save_facts(wh)

    def editor_saves(system: str | None, messages: list[Message]) -> str:
        reply = keeping(wh, ids[1:])(system, messages)
        with memory_file(wh).open("a", encoding="utf-8") as fh:
            fh.write("- Typed in an editor meanwhile.\n")
        return reply

    meta_before = meta(wh)
    out = outcome_for(wh.memory.reflect(ScriptedModel([editor_saves])), "MEMORY.md")
    assert out.action == "aborted" and "changed" in out.reason
    text = memory_file(wh).read_text(encoding="utf-8")
    assert "Typed in an editor meanwhile." in text and f"^{ids[0]}" in text
    assert meta(wh) == meta_before and evicted(wh) == []


# ------------------------------------------------------------------ daily distillation
def test_two_day_old_daily_log_is_distilled_without_the_65_percent_floor(
    wh: Workhearth,
) -> None:
    day = "2025-03-08"
    notes = [wh.memory.log_daily(f, day=day).id for f in FACTS]
    daily = folder(wh) / "daily" / f"{day}.md"
    original = daily.read_bytes()
    # An explicit run distills first, then reflects over MEMORY.md (kept as it is here).
    model = ScriptedModel(["- The project builds with hatchling.\n- Some chatter.", keep_all(wh)])
    report = wh.memory.reflect(model, now=NOW)
    model.assert_done()
    assert "Daily log daily/2025-03-08.md" in model.requests[0].text

    out = outcome_for(report, f"daily/{day}.md")
    assert out.action == "distilled"
    assert out.tokens_after < 0.65 * out.tokens_before  # shrinks by design, still accepted
    assert not daily.exists()
    assert (folder(wh) / out.backup).read_bytes() == original  # moved, never deleted
    assert out.backup.startswith(".reflection-bak/daily/2025-03-08.md.")
    assert sorted(out.dropped) == sorted(notes)

    spans = find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())
    assert [s.content for s in spans.values()] == [
        "The project builds with hatchling.",
        "Some chatter.",
    ]
    for entry_id in out.added:
        m = meta(wh)[entry_id]
        assert m["source"] == "reflection" and m["file"] == "MEMORY.md"
        assert m["provenance"][0]["origin"] == f"reflection:daily/{day}.md"
        assert FACTS[0] in m["provenance"][0]["snippet"]
    # the notes' own meta left with the log, into the backup's sidecar
    sidecar = orjson.loads((folder(wh) / (out.backup + ".json")).read_bytes())
    assert set(sidecar["entries"]) == set(notes)
    assert not set(notes) & set(meta(wh))


def test_todays_and_yesterdays_logs_are_not_distilled(wh: Workhearth) -> None:
    wh.memory.log_daily("Working on reflection today.", day="2025-03-10")
    wh.memory.log_daily("Worked on eviction yesterday.", day="2025-03-09")
    model = ScriptedModel([])  # any call fails the test
    report = wh.memory.reflect(model, now=NOW)
    model.assert_done()
    assert report.outcomes == []
    assert (folder(wh) / "daily" / "2025-03-10.md").exists()
    assert (folder(wh) / "daily" / "2025-03-09.md").exists()


def test_daily_log_stays_when_the_model_reply_holds_no_facts(wh: Workhearth) -> None:
    wh.memory.log_daily("A note.", day="2025-03-01")
    out = wh.memory.reflect(ScriptedModel(["I could not find anything."]), now=NOW).outcomes[0]
    assert out.action == "aborted"
    assert (folder(wh) / "daily" / "2025-03-01.md").exists()


def test_interrupted_distillation_is_finished_not_repeated(
    wh: Workhearth, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel = "daily/2025-03-08.md"
    wh.memory.log_daily("Chose zstd for session bundles.", day="2025-03-08")
    store = wh.memory.store("project")

    def power_cut(*_args: object) -> list[str]:
        raise OSError("power cut")

    with monkeypatch.context() as patch:
        patch.setattr(reflection, "_retire_log", power_cut)
        with pytest.raises(OSError):
            reflection.distill_daily(store, rel, ScriptedModel(["- Bundles use zstd."]))
    assert (folder(wh) / rel).exists()

    model = ScriptedModel([])  # the facts are saved already: no second model call
    out = reflection.distill_daily(store, rel, model)
    model.assert_done()
    assert out.action == "distilled" and "interrupted" in out.reason
    assert memory_file(wh).read_text(encoding="utf-8").count("Bundles use zstd.") == 1
    assert not (folder(wh) / rel).exists()


def test_a_log_with_nothing_worth_keeping_still_moves_to_the_backups(wh: Workhearth) -> None:
    wh.memory.log_daily("Coffee.", day="2025-03-01")
    out = wh.memory.reflect(ScriptedModel(["NONE"]), now=NOW).outcomes[0]
    assert out.action == "distilled" and out.added == []
    assert not (folder(wh) / "daily" / "2025-03-01.md").exists()
    assert (folder(wh) / out.backup).exists()
    assert not memory_file(wh).exists()


# ------------------------------------------------------------------ rollback
def rewrite(wh: Workhearth, ids: list[str]) -> reflection.Outcome:
    """Reflect once: drop ids[5], add one merged line (keeps over 65 %)."""
    model = ScriptedModel([keeping(wh, ids[:5], new=["Merged: FTS5 trigram search in SQLite."])])
    out = outcome_for(wh.memory.reflect(model), "MEMORY.md")
    assert out.action == "rewritten", out.reason
    return out


def test_rollback_restores_file_and_meta_when_nothing_newer(wh: Workhearth) -> None:
    ids = save_facts(wh)
    original, meta_before = memory_file(wh).read_bytes(), copy.deepcopy(meta(wh))
    out = rewrite(wh, ids)
    (new_id,) = out.added

    back = reflection.rollback(wh.memory, out.backup)
    assert back.action == "restored", back.reason
    assert memory_file(wh).read_bytes() == original
    assert meta(wh) == meta_before  # ids[5] has its meta again; the merged line's is gone
    assert new_id in back.dropped
    assert [e["reason"] for e in evicted(wh) if e["id"] == new_id] == ["rollback"]
    # the rollback is undoable: the file it replaced was backed up too
    assert new_id in (folder(wh) / back.backup).read_text(encoding="utf-8")
    assert wh.memory.get(ids[5]).content == FACTS[5]


def test_rollback_refused_when_an_entry_was_saved_after_the_backup(wh: Workhearth) -> None:
    ids = save_facts(wh)
    out = rewrite(wh, ids)
    later = wh.memory.save("A fact learned after the reflection.").id
    current = memory_file(wh).read_bytes()

    back = reflection.rollback(wh.memory, out.backup)
    assert back.action == "conflict"
    assert later in back.reason
    assert memory_file(wh).read_bytes() == current
    assert wh.memory.get(later).content == "A fact learned after the reflection."


def test_rollback_refused_when_a_kept_entry_was_edited_after_the_backup(wh: Workhearth) -> None:
    ids = save_facts(wh)
    out = rewrite(wh, ids)
    wh.memory.edit(ids[1], "Tests run with pytest -q.")
    back = reflection.rollback(wh.memory, out.backup)
    assert back.action == "conflict" and ids[1] in back.reason
    assert wh.memory.get(ids[1]).content == "Tests run with pytest -q."


def test_rollback_of_a_distillation_brings_the_log_back(wh: Workhearth) -> None:
    day = "2025-03-08"
    wh.memory.log_daily("Decided to keep the index rebuildable.", day=day)
    daily = folder(wh) / "daily" / f"{day}.md"
    original = daily.read_bytes()
    report = wh.memory.reflect(
        ScriptedModel(["- The index is rebuildable.", keep_all(wh)]), now=NOW
    )
    out = outcome_for(report, f"daily/{day}.md")
    (fact,) = out.added

    back = reflection.rollback(wh.memory, out.backup)
    assert back.action == "restored", back.reason
    assert daily.read_bytes() == original
    assert fact not in memory_file(wh).read_text(encoding="utf-8")
    # an automatic run does not distill what the user just rolled back
    model = ScriptedModel([])
    reflection.maybe_reflect(wh.memory, model, now=NOW)
    model.assert_done()
    assert daily.exists()


# ------------------------------------------------------------------ maintenance
def test_manual_maintenance_silences_maybe_reflect_but_not_an_explicit_run(
    tmp_path: Path,
) -> None:
    wh = make_hearth(tmp_path, '[memory]\nmaintenance = "manual"\n')
    save_facts(wh)
    wh.memory.log_daily("An old note worth keeping.", day="2025-03-01")
    before = memory_file(wh).read_bytes()

    silent = ScriptedModel([])
    report = reflection.maybe_reflect(wh.memory, silent, now=NOW)
    silent.assert_done()
    assert report.outcomes == [] and "manual" in report.skipped
    assert memory_file(wh).read_bytes() == before
    assert not (folder(wh) / ".reflection-bak").exists()

    asked = ScriptedModel(["- An old note worth keeping.", keep_all(wh)])
    report = wh.memory.reflect(asked, now=NOW)
    asked.assert_done()
    assert [o.action for o in report.outcomes] == ["distilled", "unchanged"]
    assert len(find_entries(memory_file(wh).read_text(encoding="utf-8").splitlines())) == 7
    wh.memory.close()


def test_maybe_reflect_runs_when_due_and_then_waits(wh: Workhearth) -> None:
    ids = save_facts(wh)
    first = ScriptedModel([keeping(wh, ids)])
    report = reflection.maybe_reflect(wh.memory, first, now=NOW)
    first.assert_done()
    assert [o.action for o in report.outcomes] == ["unchanged"]

    wh.memory.save("One more fact after the first reflection.")
    again = ScriptedModel([])
    assert reflection.maybe_reflect(wh.memory, again, now=NOW + 3600).outcomes == []
    again.assert_done()  # changed, but reflected an hour ago: not due yet


def test_reflect_without_a_model_says_one_is_needed(wh: Workhearth) -> None:
    save_facts(wh)
    with pytest.raises(ConfigError, match="needs a model"):
        wh.memory.reflect(None)
    assert reflection.maybe_reflect(wh.memory, None).skipped == "no model configured"


def test_cli_reflect_without_a_model_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    from tests.e2e.conftest import make_hearth as make_cli_hearth

    cli = make_cli_hearth(tmp_path / "cli")
    result = cli.run("memory", "reflect")
    assert result.code != 0
    assert result.err_lines == [result.err_lines[0]] and "needs a model" in result.err
