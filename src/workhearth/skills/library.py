"""Finding skills: fixed precedence, collision warnings, and a cache keyed by file times.

Precedence (first wins; a later skill of the same name is reported, not loaded):
workspace ``.hearth/skills``, ``$HEARTH_HOME/skills``, built-in, ``.agents/skills``,
``~/.agents/skills``, ``.claude/skills``, ``~/.claude/skills``. Folders under the
workspace count only when the workspace is authorized and the user trusts what they
hold now (:mod:`workhearth.trust`): a cloned repository's skills are its author's
instructions and scripts, not the user's.

Why a cache: listing parses every ``SKILL.md`` (YAML), which for 200 skills costs
far more than the 50 ms a listing may take. Each folder's parse result is kept,
keyed by the ``(mtime, size, inode)`` of ``SKILL.md`` and ``.skill-metadata.yaml``,
in memory and in ``$HEARTH_HOME/cache/skills.json`` so a fresh process is warm too.
A warm listing is then one ``scandir`` per root and two ``stat`` per skill.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import NotFoundError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.paths import HearthPaths
from workhearth.skills.model import Example, Skill, SkillError, Source
from workhearth.skills.validate import METADATA_FILE, SKILL_FILE

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
# The skill folders a workspace may bring (trust items, see workhearth.trust).
WORKSPACE_SKILL_FOLDERS = (".hearth/skills", ".agents/skills", ".claude/skills")
CACHE_VERSION = 2  # 2: problems split into errors and warnings (issue #18)
_memory_cache: dict[str, tuple[list[Any], dict[str, Any]]] = {}

FileCheck = Callable[[str], str]


def _signature(path: Path) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def make_file_check(roots: Sequence[Path]) -> FileCheck:
    """A ``file_check`` for rendering: the file must exist inside one of ``roots``.

    A relative value is taken from the first root (the session's workspace);
    links are followed before the check, so a link cannot lead out.
    """
    real_roots = [Path(os.path.realpath(r)) for r in roots]

    def check(value: str) -> str:
        if not real_roots:
            raise SkillError(
                f"file {value!r}: no authorized workspace to read it from",
                code="file_no_workspace",
            )
        path = Path(os.path.expanduser(value))
        if not path.is_absolute():
            path = real_roots[0] / path
        real = Path(os.path.realpath(path))
        if not any(_inside(real, root) for root in real_roots):
            raise SkillError(
                f"file {value!r} is outside the authorized workspace",
                code="file_outside_workspace",
            )
        if not real.is_file():
            raise SkillError(f"file {value!r} does not exist", code="file_missing")
        return value

    return check


class SkillLibrary:
    """Every skill visible from one workspace, for one user."""

    def __init__(
        self,
        paths: HearthPaths,
        workspace: Path,
        *,
        user_home: Path | None,
        workspace_authorized: bool,
        trusted: Callable[[], Collection[str]] | None = None,
        language: str = "en",
        builtin_dir: Path = BUILTIN_DIR,
    ) -> None:
        """``trusted()`` gives the workspace's items (``".claude/skills"``…) the user
        trusts as they are now, asked again at each scan; None trusts none of them."""
        self.paths = paths
        self.workspace = Path(workspace)
        self.user_home = user_home
        self.workspace_authorized = workspace_authorized
        self.trusted = trusted or (lambda: ())
        self.language = language
        self.builtin_dir = builtin_dir
        self.cache_file = paths.home / "cache" / "skills.json"
        self._found: tuple[builtins.list[Skill], builtins.list[str]] | None = None

    # ------------------------------------------------------------ discovery
    def roots(self) -> builtins.list[tuple[Source, Path]]:
        """Where skills are looked for, in precedence order (unauthorized workspace left out)."""
        home = self.user_home
        trusted = set(self.trusted()) if self.workspace_authorized else set()
        out: builtins.list[tuple[Source, Path | None]] = [
            ("workspace", self._workspace_root(".hearth/skills", trusted)),
            ("user", self.paths.skills),
            ("builtin", self.builtin_dir),
            ("agents-workspace", self._workspace_root(".agents/skills", trusted)),
            ("agents-user", home / ".agents" / "skills" if home else None),
            ("claude-workspace", self._workspace_root(".claude/skills", trusted)),
            ("claude-user", home / ".claude" / "skills" if home else None),
        ]
        seen: set[str] = set()
        roots: builtins.list[tuple[Source, Path]] = []
        for source, root in out:
            if root is None:
                continue
            # Why: run in the home folder, ".claude/skills" and "~/.claude/skills" are one folder.
            real = os.path.realpath(root)
            if real not in seen:
                seen.add(real)
                roots.append((source, root))
        return roots

    def _workspace_root(self, item: str, trusted: Collection[str]) -> Path | None:
        if not self.workspace_authorized or item not in trusted:
            return None
        return self.workspace / item

    def _left_out(self, roots: Collection[Path]) -> builtins.list[str]:
        """One warning per workspace skill folder that exists but is not loaded."""
        warnings = []
        for item in WORKSPACE_SKILL_FOLDERS:
            folder = self.workspace / item
            if not folder.is_dir() or folder in roots:
                continue
            if self.user_home is not None and os.path.realpath(folder) in {
                os.path.realpath(self.user_home / ".agents" / "skills"),
                os.path.realpath(self.user_home / ".claude" / "skills"),
            }:
                continue  # Why: in the home folder these are the user's own skills
            if not self.workspace_authorized:
                warnings.append(
                    f"skills in {folder} are not loaded: this workspace is not authorized"
                )
            else:
                warnings.append(
                    f"skills in {folder} are not loaded: this folder is not trusted "
                    f"(run `hearth workspace trust {self.workspace}` to load them)"
                )
        return warnings

    def _scan(self) -> tuple[builtins.list[Skill], builtins.list[str]]:
        cache = self._load_cache()
        dirty = False
        chosen: dict[str, Skill] = {}
        roots = self.roots()
        warnings: builtins.list[str] = self._left_out({root for _, root in roots})
        for source, root in roots:
            try:
                entries = sorted(os.scandir(root), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith((".", "__")):
                    continue
                folder = root / entry.name
                sig = _signature(folder / SKILL_FILE)
                if sig is None:
                    continue
                key = str(folder)
                full_sig = [sig, _signature(folder / METADATA_FILE)]
                hit = cache.get(key)
                if hit is not None and hit[0] == full_sig:
                    info = hit[1]
                else:
                    info = _parse(folder)
                    cache[key] = (full_sig, info)
                    dirty = True
                skill = _skill(info, source, folder)
                # Why both keys: a skill is found by its name or its folder's (see get).
                winner = chosen.get(entry.name) or chosen.get(skill.name)
                if winner is None:
                    chosen[entry.name] = chosen[skill.name] = skill
                else:
                    warnings.append(
                        f"skill {skill.name!r} in {folder} ({source}) is hidden by the one "
                        f"in {winner.path} ({winner.source})"
                    )
        if dirty:
            self._save_cache(cache)
        # Why by id: a skill sits under two keys, and Skill (it holds a dict) is unhashable.
        return list({id(s): s for s in chosen.values()}.values()), warnings

    def _found_now(self) -> tuple[builtins.list[Skill], builtins.list[str]]:
        if self._found is None:
            self._found = self._scan()
        return self._found

    def refresh(self) -> None:
        """Forget this object's listing (files changed since): the next call rescans."""
        self._found = None

    def list(self) -> builtins.list[Skill]:
        """Every skill found (ok and broken), one per name, in precedence then name order."""
        return list(self._found_now()[0])

    def warnings(self) -> builtins.list[str]:
        """Name collisions, and workspace skills left out because it is not authorized."""
        return list(self._found_now()[1])

    def get(self, name: str) -> Skill:
        for skill in self._found_now()[0]:
            if skill.name == name or skill.path.name == name:
                return skill
        raise NotFoundError(
            f"no skill named {name!r}",
            code="skill_unknown",
            params={"name": name},
            cli_hint="see: hearth skills list",
        )

    def _ok(self, name: str) -> Skill:
        skill = self.get(name)
        if not skill.ok:
            raise SkillError(
                f"skill {name!r} is broken: {skill.problems[0]}",
                code="skill_broken",
                params={"name": name},
            )
        return skill

    def body(self, name: str) -> str:
        """The instructions of ``SKILL.md`` (frontmatter left out); a broken skill is refused."""
        from workhearth.skills.validate import read_skill

        skill = self._ok(name)
        parsed = read_skill(skill.path)
        if parsed.errors:  # changed on disk since it was listed
            raise SkillError(
                f"skill {name!r} is broken: {parsed.errors[0]}",
                code="skill_broken",
                params={"name": name},
            )
        return parsed.body

    def examples(self, name: str) -> builtins.list[Example]:
        from workhearth.skills.metadata import read_examples

        skill = self._ok(name)
        examples, problems = read_examples(skill.path)
        if problems:
            raise SkillError(
                f"skill {name!r} is broken: {problems[0]}",
                code="skill_broken",
                params={"name": name},
            )
        return examples

    def example(self, name: str, example_id: str) -> Example:
        examples = self.examples(name)
        for ex in examples:
            if ex.id == example_id:
                return ex
        ids = ", ".join(e.id for e in examples) or "none"
        raise NotFoundError(
            f"skill {name!r} has no example {example_id!r} (it has: {ids})",
            code="example_unknown",
            params={"name": name, "example": example_id},
        )

    def render(
        self,
        name: str,
        example_id: str,
        values: Mapping[str, str],
        *,
        file_check: FileCheck | None = None,
    ) -> str:
        """The example's prompt filled with ``values`` (strict; see skills.metadata.render).

        Without ``file_check``, file variables must be inside this workspace, and
        only when it is authorized.
        """
        from workhearth.skills.metadata import render

        if file_check is None:
            file_check = make_file_check([self.workspace] if self.workspace_authorized else [])
        return render(self.example(name, example_id), values, file_check)

    def catalogue(self, budget_tokens: int) -> str:
        """``name: description`` lines of the ok skills, as many as fit ``budget_tokens``."""
        from workhearth.models.tokens import count_tokens

        lines: builtins.list[str] = []
        used = 0
        for skill in self.list():
            if not skill.ok:
                continue
            line = f"{skill.name}: {' '.join(skill.description.split())}"
            cost = count_tokens(line) + 1
            if used + cost > budget_tokens:
                break
            lines.append(line)
            used += cost
        return "\n".join(lines)

    # ------------------------------------------------------------- changes
    def install(self, source: Path, *, force: bool = False) -> Skill:
        """Copy a skill folder, ``.zip`` or ``.skill`` archive into ``$HEARTH_HOME/skills``.

        One named like an installed or a built-in skill needs ``force``.
        """
        from workhearth.skills.install import install

        folder = install(Path(source), self.paths.skills, force=force, builtin_dir=self.builtin_dir)
        self.refresh()
        return _skill(_parse(folder), "user", folder)

    def new(self, name: str, description: str = "", *, directory: Path | None = None) -> Skill:
        """Scaffold a valid skill (SKILL.md + one example) in ``$HEARTH_HOME/skills`` or ``directory``."""
        from workhearth.skills.install import scaffold

        folder = scaffold(name, description, directory or self.paths.skills)
        self.refresh()
        return _skill(_parse(folder), "user" if directory is None else "workspace", folder)

    # --------------------------------------------------------------- cache
    def _load_cache(self) -> dict[str, tuple[builtins.list[Any], dict[str, Any]]]:
        key = str(self.cache_file)
        if key in _memory_cache:
            return _memory_cache[key]  # type: ignore[return-value]
        cache: dict[str, tuple[builtins.list[Any], dict[str, Any]]] = {}
        with contextlib.suppress(OSError, orjson.JSONDecodeError, TypeError, ValueError):
            raw = orjson.loads(self.cache_file.read_bytes())
            if isinstance(raw, dict) and raw.get("version") == CACHE_VERSION:
                cache = {k: (v[0], v[1]) for k, v in raw["skills"].items()}
        _memory_cache[key] = cache  # type: ignore[assignment]
        return cache

    def _save_cache(self, cache: dict[str, tuple[builtins.list[Any], dict[str, Any]]]) -> None:
        # Why: drop folders that are gone, so the file never grows without bound.
        live = {k: v for k, v in cache.items() if os.path.exists(k)}
        data = orjson.dumps({"version": CACHE_VERSION, "skills": live})
        # Why: the cache only saves time; a read-only or full home must not fail a listing.
        with contextlib.suppress(OSError):
            make_private_dir(self.cache_file.parent)
            atomic_write(self.cache_file, data)


def _parse(folder: Path) -> dict[str, Any]:
    """What a listing needs of one skill folder, as JSON-ready values."""
    from workhearth.skills.metadata import read_examples
    from workhearth.skills.validate import read_skill

    parsed = read_skill(folder)
    # Why: hearth's own examples file is checked strictly; a broken one breaks the skill.
    examples = read_examples(folder)[1]
    return {
        "name": _skill_name(parsed.name, folder.name),
        "description": parsed.description,
        "problems": parsed.problems + examples,
        "errors": parsed.errors + examples,
        "allowed_tools": list(parsed.allowed_tools) if parsed.allowed_tools is not None else None,
        "license": parsed.license,
        "compatibility": parsed.compatibility,
        "metadata": parsed.metadata,
    }


def _skill_name(declared: str, folder: str) -> str:
    """The name a skill goes by: its own when it has one on a single line, else its folder's."""
    if declared.strip() and declared.isprintable():
        return declared
    return folder


def _skill(info: Mapping[str, Any], source: str, folder: Path) -> Skill:
    problems = tuple(info["problems"])
    tools = info.get("allowed_tools")
    return Skill(
        name=info["name"],
        description=info["description"],
        source=source,
        path=folder,
        status="broken" if info["errors"] else "ok",
        problems=problems,
        allowed_tools=tuple(tools) if tools is not None else None,
        license=info.get("license"),
        compatibility=info.get("compatibility"),
        metadata=dict(info.get("metadata") or {}),
    )
