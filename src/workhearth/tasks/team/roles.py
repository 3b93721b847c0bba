"""Team roles (issue #23 item 3; DESIGN §2, §5): who a specialist is, in one Markdown file.

A role is a Markdown file whose YAML front matter says ``name``, ``description``,
``tools``, ``model`` and ``mode``, and whose body is the specialist's system prompt.
Claude Code's ``.claude/agents/*.md`` are read unchanged: ``tools`` (a comma-separated
string or a list of Claude's tool names, mapped to ours), ``disallowedTools``, ``model``
(``sonnet`` / ``opus`` / ``haiku`` / ``inherit`` or a model id) and ``permissionMode``;
``color`` is ignored, Claude's other keys are ignored with a warning.

Where roles come from, first wins by name: the workspace's ``.hearth/agents``, its
``.claude/agents``, ``$HEARTH_HOME/agents``, then the built-ins beside this module.
The workspace's two folders load only while the user trusts what they hold now
(:mod:`workhearth.trust`); until then their files are *pending*: named, with a note,
never read into a prompt.

**Narrowing.** A role only takes away from what the run allows (:meth:`Role.narrow`):
its ``mode`` is a ceiling (``ask`` < ``agent`` < ``quest``), so ``mode: quest`` or
Claude's ``permissionMode: bypassPermissions`` in an agent-mode run stays agent mode;
its ``tools`` keep only the run's tools it names. A tool entry hearth cannot honour
exactly (``Bash(git:*)``, ``WebFetch``) is left out with a warning, never widened to
the whole tool. A file that cannot be read as a role (no front matter, bad YAML, no
valid name, a ``tools`` or ``mode`` that cannot be read) is listed *broken* with its
problem and never used: running it without the narrowing it asks for could let it
do more than it says.
"""

from __future__ import annotations

import builtins
import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from workhearth.agent.browser.policy import BROWSER_TOOLS
from workhearth.agent.tools.skills import FOREIGN_NAMES
from workhearth.errors import ConfigError, NotFoundError, UsageError
from workhearth.paths import HearthPaths
from workhearth.skills.validate import (
    LineDict,
    split_frontmatter,
    split_tools,
    yaml_load,
    yaml_problem,
)

Source = Literal["builtin", "user", "folder", "claude"]
BUILTIN_DIR = Path(__file__).resolve().parent / "roles"
# The role folders a workspace may bring (trust items, see workhearth.trust), first wins.
FOLDER_ITEMS: tuple[tuple[Source, str], ...] = (
    ("folder", ".hearth/agents"),
    ("claude", ".claude/agents"),
)
MODES: tuple[str, ...] = ("ask", "agent", "quest")  # narrowest first
MAX_NAME = 64
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
MAX_FILE_BYTES = 256 * 1024
TIERS = ("light", "strong")  # workhearth.config.TIERS

# Tool names are contracts (DESIGN §5); MCP tools pass through as mcp__<server>__<tool>.
HEARTH_TOOLS = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "glob",
        "grep",
        "shell",
        "delete",
        "memory_search",
        "memory_save",
        "session_list",
        "session_read",
        "activate_skill",
        "task",
        *BROWSER_TOOLS,
    }
)
# Claude Code's tool names (case-insensitive) to ours: the ones skills use, and "Agent".
CLAUDE_TOOLS = {**FOREIGN_NAMES, "agent": "task"}
CLAUDE_DROPPED = frozenset({"webfetch", "websearch"})
# Claude's permissionMode → a mode ceiling; None = the run's own (nothing here widens it).
CLAUDE_MODES: dict[str, str | None] = {
    "default": None,
    "acceptEdits": None,
    "dontAsk": None,
    "bypassPermissions": None,
    "plan": "ask",
}
# Claude's model aliases → router tiers; "inherit" = the run's own model.
CLAUDE_MODELS: dict[str, str | None] = {
    "haiku": "light",
    "sonnet": "strong",
    "opus": "strong",
    "inherit": None,
}
KNOWN_FIELDS = frozenset(
    {"name", "description", "tools", "disallowedTools", "model", "mode", "permissionMode"}
)
QUIET_FIELDS = frozenset({"color"})  # Claude's display colour: nothing to do with the work


def valid_name(name: str) -> bool:
    """A role name: 1-64 of a-z, 0-9 and '-', not starting with '-' (like skills)."""
    return NAME_RE.fullmatch(name) is not None


@dataclass(frozen=True)
class Role:
    """One team role as found on disk (or built in).

    ``tools`` None means every tool the run allows; ``()`` means none. ``tier`` is a
    router tier (``light`` / ``strong``) and ``model`` a model spec; both None means
    the run's own. ``mode`` is a ceiling, None the run's own. ``problem`` is set when
    the file cannot be used (the role is *broken*); ``warnings`` are deviations it
    loads despite.
    """

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None
    tier: str | None
    model: str | None
    mode: str | None
    source: Source
    path: Path | None
    warnings: tuple[str, ...] = ()
    denied_tools: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def narrow(self, mode: str, allowed_tools: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        """The mode and tools this role gets in a run that allows ``mode`` and ``allowed_tools``.

        Never wider than the run: the narrower of the two modes, and the run's tools
        (in the run's order) that the role names and does not deny.
        """
        if not self.ok:
            raise ConfigError(
                f"role {self.name!r} is broken: {self.problem}",
                code="role_broken",
                params={"name": self.name},
            )
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r} (one of: {', '.join(MODES)})")
        effective = mode if self.mode is None else min(mode, self.mode, key=MODES.index)
        return effective, tuple(t for t in allowed_tools if self._permits(t))

    def _permits(self, tool: str) -> bool:
        if any(_matches(d, tool) for d in self.denied_tools):
            return False
        return self.tools is None or any(_matches(p, tool) for p in self.tools)

    def as_dict(self) -> dict[str, Any]:
        """The listing shape (like ``hearth skills list --json``)."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path) if self.path is not None else None,
            "tools": list(self.tools) if self.tools is not None else None,
            "denied_tools": list(self.denied_tools),
            "tier": self.tier,
            "model": self.model,
            "mode": self.mode,
            "status": "ok" if self.ok else "broken",
            "problems": ([self.problem] if self.problem else []) + list(self.warnings),
        }


def _matches(pattern: str, tool: str) -> bool:
    """``mcp__srv`` names a whole server and ``mcp__srv__*`` globs; other names match exactly."""
    if pattern == tool:
        return True
    if not pattern.startswith("mcp__"):
        return False
    return fnmatch.fnmatchcase(tool, pattern) or tool.startswith(pattern + "__")


# ------------------------------------------------------------------ parsing
@dataclass
class _Draft:
    """What a role file says, as far as it could be read."""

    file: str
    warnings: list[str] = field(default_factory=list)
    problem: str | None = None

    def warn(self, text: str) -> None:
        self.warnings.append(f"{self.file}: {text}")

    def fail(self, text: str) -> None:
        if self.problem is None:
            self.problem = f"{self.file}: {text}"


def parse_role(text: str, *, stem: str, source: Source, path: Path | None = None) -> Role:
    """A role from a file's text; ``stem`` names it when the file names nothing usable."""
    draft = _Draft(path.name if path is not None else f"{stem}.md")
    broken = _broken(stem, source, path)
    split = split_frontmatter(text)
    if split is None:
        draft.fail(
            "no YAML front matter (the file must start with a '---' line and the "
            "front matter end with another)"
        )
        return _finish(broken, draft)
    front, body, first = split
    try:
        data = yaml_load(front)
    except Exception as exc:  # yaml.YAMLError and its subclasses
        draft.problem = yaml_problem(draft.file, exc, first)
        return _finish(broken, draft)
    if not isinstance(data, LineDict):
        draft.fail("the front matter must be a YAML mapping")
        return _finish(broken, draft)
    for key in data:
        if key not in KNOWN_FIELDS and key not in QUIET_FIELDS:
            draft.warn(f"field {key!r} is not used by hearth roles; ignored")
    tier, model = _model(data, draft)
    role = Role(
        name=_name(data, stem, draft),
        description=_description(data, draft),
        prompt=body.strip(),
        tools=_tools(data, "tools", draft),
        tier=tier,
        model=model,
        mode=_mode(data, draft),
        source=source,
        path=path,
        denied_tools=_tools(data, "disallowedTools", draft) or (),
    )
    if not role.prompt:
        draft.warn("the body (the role's instructions) is empty")
    return _finish(role, draft)


def _broken(stem: str, source: Source, path: Path | None) -> Role:
    return Role(stem, "", "", (), None, None, "ask", source, path)


def _finish(role: Role, draft: _Draft) -> Role:
    if draft.problem is not None:
        # Why: a broken role is listed, never run; nothing of it may widen a run.
        role = replace(role, tools=(), mode="ask", denied_tools=())
    return replace(role, warnings=tuple(draft.warnings), problem=draft.problem)


def _name(data: LineDict, stem: str, draft: _Draft) -> str:
    name = data.get("name")
    if name is None:
        draft.fail("missing required field 'name'")
        return stem
    if not isinstance(name, str) or not valid_name(name):
        draft.fail(f"name {name!r} must be 1-{MAX_NAME} of a-z, 0-9 and '-', not starting with '-'")
        return stem
    return name


def _description(data: LineDict, draft: _Draft) -> str:
    text = data.get("description")
    if not isinstance(text, str) or not text.strip():
        # Why a warning: the lead can still assign the role by name.
        draft.warn("no description: the lead sees only the role's name")
        return ""
    return " ".join(text.split())


def _tools(data: LineDict, key: str, draft: _Draft) -> tuple[str, ...] | None:
    """Our tool names for ``tools`` / ``disallowedTools``; None when absent."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        entries = split_tools(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        entries = [v.strip() for v in value if v.strip()]
    else:
        draft.fail(f"{key} must be a comma-separated string or a list of tool names")
        return ()
    out: dict[str, None] = {}  # ordered, without duplicates (Edit and MultiEdit)
    for entry in entries:
        ours = _tool_name(entry, key, draft)
        if ours is not None:
            out[ours] = None
    return tuple(out)


def _tool_name(entry: str, key: str, draft: _Draft) -> str | None:
    name, paren, _ = entry.partition("(")
    name = name.strip()
    lower = name.lower()
    if paren and key == "tools":
        # Why left out: hearth cannot hold a role to Claude's pattern, and the whole
        # tool would be more than the author allowed.
        draft.warn(f"tool {entry!r}: patterns are not supported in roles; {name} left out")
        return None
    if lower in CLAUDE_DROPPED:
        if key == "tools":
            draft.warn(
                f"tool {name!r}: hearth has no such tool; left out (list the browser tools, "
                "browser_open and the rest, by name to let the role browse)"
            )
        return None
    if lower in CLAUDE_TOOLS:
        return CLAUDE_TOOLS[lower]
    if name not in HEARTH_TOOLS and not name.startswith("mcp__"):
        draft.warn(
            f"unknown tool {name!r} in {key}: it matches nothing unless the run has a "
            "tool of that name"
        )
    return name


def _mode(data: LineDict, draft: _Draft) -> str | None:
    """The narrower of hearth's ``mode`` and Claude's ``permissionMode``; None = the run's."""
    modes: builtins.list[str] = []
    if "mode" in data:
        value = data["mode"]
        if value not in MODES:
            draft.fail(f"mode {value!r} must be one of: {', '.join(MODES)}")
            return "ask"
        modes.append(value)
    if "permissionMode" in data:
        value = data["permissionMode"]
        if not isinstance(value, str) or value not in CLAUDE_MODES:
            draft.fail(f"permissionMode {value!r} must be one of: {', '.join(CLAUDE_MODES)}")
            return "ask"
        mapped = CLAUDE_MODES[value]
        if mapped is not None:
            modes.append(mapped)
    return min(modes, key=MODES.index) if modes else None


def _model(data: LineDict, draft: _Draft) -> tuple[str | None, str | None]:
    """``(tier, model spec)``: an alias or tier name gives a tier, anything else a model."""
    value = data.get("model")
    if value is None:
        return None, None
    if not isinstance(value, str) or not value.strip():
        draft.warn(f"model {value!r} is not a model name; the run's model is used")
        return None, None
    text = value.strip()
    if text.lower() in CLAUDE_MODELS:
        return CLAUDE_MODELS[text.lower()], None
    if text in TIERS:
        return text, None
    return None, text


def read_role(path: Path, source: Source) -> Role:
    """Parse one role file; an unreadable file is a broken role, never an exception."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _unreadable(path, source, f"cannot read ({exc.strerror})")
    if len(raw) > MAX_FILE_BYTES:
        return _unreadable(
            path, source, f"over {MAX_FILE_BYTES // 1024} KiB; a role is a page of instructions"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(path, source, f"not UTF-8 text (bad byte at offset {exc.start})")
    return parse_role(text, stem=path.stem, source=source, path=path)


def _unreadable(path: Path, source: Source, problem: str) -> Role:
    draft = _Draft(path.name)
    draft.fail(problem)
    return _finish(_broken(path.stem, source, path), draft)


# ------------------------------------------------------------------ library
class RoleLibrary:
    """Every role visible from one workspace, for one user (see the module doc)."""

    def __init__(
        self,
        paths: HearthPaths,
        workspace: Path,
        *,
        trusted: Callable[[], frozenset[str]] | None = None,
        builtin_dir: Path = BUILTIN_DIR,
    ) -> None:
        """``trusted()`` gives the workspace's items (``".claude/agents"``…) the user trusts
        as they are now; None asks ``$HEARTH_HOME/trust.json`` at each scan."""
        self.paths = paths
        self.workspace = Path(workspace)
        self.user_dir = paths.home / "agents"
        self.builtin_dir = builtin_dir
        self._trusted = trusted or self._trust_store
        self._found: tuple[builtins.list[Role], builtins.list[str], builtins.list[str]] | None
        self._found = None

    def _trust_store(self) -> frozenset[str]:
        from workhearth.trust import TrustStore

        return TrustStore(self.paths).check(self.workspace).trusted_items

    def roots(self) -> builtins.list[tuple[Source, Path]]:
        """Where roles are read from now, in precedence order (untrusted folders left out)."""
        trusted = self._trusted()
        roots = [
            (source, self.workspace / item)
            for source, item in FOLDER_ITEMS
            if item in trusted and not self._is_user_dir(self.workspace / item)
        ]
        return [*roots, ("user", self.user_dir), ("builtin", self.builtin_dir)]

    def _is_user_dir(self, folder: Path) -> bool:
        # Why: with HEARTH_HOME at ~/.hearth and the home folder as workspace,
        # .hearth/agents is the user's own roles folder, not something a folder brings.
        return os.path.realpath(folder) == os.path.realpath(self.user_dir)

    def _scan(self) -> tuple[builtins.list[Role], builtins.list[str], builtins.list[str]]:
        chosen: dict[str, Role] = {}
        notes: builtins.list[str] = []
        for source, root in self.roots():
            for path in _role_files(root):
                role = read_role(path, source)
                winner = chosen.get(role.name)
                if winner is None:
                    chosen[role.name] = role
                else:
                    notes.append(
                        f"role {role.name!r} in {path} ({source}) is hidden by the one in "
                        f"{winner.path or 'hearth'} ({winner.source})"
                    )
        return builtins.list(chosen.values()), notes, self._pending()

    def _pending(self) -> builtins.list[str]:
        trusted = self._trusted()
        out: builtins.list[str] = []
        for _, item in FOLDER_ITEMS:
            folder = self.workspace / item
            if item in trusted or self._is_user_dir(folder):
                continue
            for path in _role_files(folder):
                out.append(
                    f"{item}/{path.name}: not loaded: {self.workspace} is not trusted for "
                    f"{item}, or it changed since it was trusted "
                    f"(run `hearth workspace trust {self.workspace}` to load it)"
                )
        return out

    def _now(self) -> tuple[builtins.list[Role], builtins.list[str], builtins.list[str]]:
        if self._found is None:
            self._found = self._scan()
        return self._found

    def refresh(self) -> None:
        """Forget this object's listing (files or trust changed since): the next call rescans."""
        self._found = None

    def list(self) -> builtins.list[Role]:
        """One role per name (ok and broken), in precedence then file name order."""
        return builtins.list(self._now()[0])

    def warnings(self) -> builtins.list[str]:
        """Roles hidden by a role of the same name found first."""
        return builtins.list(self._now()[1])

    def pending(self) -> builtins.list[str]:
        """One note per role file of the workspace that waits for the user's trust."""
        return builtins.list(self._now()[2])

    def get(self, name: str) -> Role:
        """The usable role ``name``; a broken one is refused with its problem."""
        roles, _, pending = self._now()
        for role in roles:
            if role.name == name:
                if not role.ok:
                    raise ConfigError(
                        f"role {name!r} is broken: {role.problem}",
                        code="role_broken",
                        params={"name": name},
                    )
                return role
        waiting = [note for note in pending if _pending_stem(note) == name]
        known = ", ".join(sorted(r.name for r in roles if r.ok)) or "none"
        message = f"no role named {name!r} (known: {known})"
        if waiting:
            message += f"; {waiting[0]}"
        raise NotFoundError(message, code="role_unknown", params={"name": name})


def _pending_stem(note: str) -> str:
    return Path(note.split(":", 1)[0]).stem


def _role_files(folder: Path) -> Iterable[Path]:
    """The ``*.md`` files directly in ``folder``, by name (none when it is absent)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
    ]


__all__ = [
    "BUILTIN_DIR",
    "CLAUDE_MODELS",
    "CLAUDE_MODES",
    "CLAUDE_TOOLS",
    "HEARTH_TOOLS",
    "Role",
    "RoleLibrary",
    "Source",
    "parse_role",
    "read_role",
    "valid_name",
]
