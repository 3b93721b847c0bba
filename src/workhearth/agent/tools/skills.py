"""The ``activate_skill`` tool and what a session knows about skills (DESIGN §5, issue #10).

Progressive disclosure: the system prompt lists every usable skill in one line
(:func:`catalogue`); ``activate_skill`` loads one skill's instructions behind a
header that says where its folder is, how to run its scripts and which files it
has; those files are read on demand with ``read_file``.

**Reading skill folders.** Skills live outside the authorized folders (in the
package, in ``$HEARTH_HOME/skills``, in ``~/.claude/skills``…). :class:`SkillState`
holds a second :class:`~workhearth.agent.safefs.SafeFS` rooted at the folders of
the usable skills, and only the reading tools (``read_file``, ``list_dir``) consult
it, through ``ToolContext.read_fs``. Writes never see it, so ``write_file``,
``edit_file`` and ``delete`` refuse every path there as before, and the rest of
``$HEARTH_HOME`` stays protected. Scripts run through the ``shell`` tool, with its
modes, approvals and quest sandbox.

**allowed-tools.** While the active skill declares ``allowed-tools``, only those
tools, ``activate_skill`` and the read-only basics (:data:`ALWAYS_ALLOWED`) are
offered and may be called; another call is refused (and audited) with a message
naming the skill. Names are ours (``shell``, ``mcp__srv__tool``) or the ones
Claude Code skills use (``Bash``, ``Read``, ``Bash(git:*)``…), mapped to ours; a
pattern in parentheses allows the whole tool (the mode and approvals still judge
each call). Activating another skill replaces the active one; a skill without
``allowed-tools`` lifts the narrowing. The active skill and its allowed tools are
recorded in the session's checkpoint (``active_skill``), so a resumed session
keeps the narrowing it had, even when the skill changed on disk meanwhile.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.registry import tool
from workhearth.errors import HearthError

if TYPE_CHECKING:
    from workhearth.sessions.session import Session
    from workhearth.skills.library import SkillLibrary
    from workhearth.skills.model import Skill

# Why: the catalogue shares the system prompt with memory; a few hundred skills must not crowd it.
CATALOGUE_TOKENS = 2_000
ALWAYS_ALLOWED = frozenset({"activate_skill", "read_file", "list_dir", "glob", "grep"})
FILE_FOLDERS = ("scripts", "references", "assets")
FILES_SHOWN = 60
# Claude Code's tool names, as skills written for it list them, to ours.
FOREIGN_NAMES = {
    "read": "read_file",
    "write": "write_file",
    "edit": "edit_file",
    "multiedit": "edit_file",
    "bash": "shell",
    "glob": "glob",
    "grep": "grep",
    "ls": "list_dir",
    "task": "task",
}
CATALOGUE_HEAD = """
# Skills
Skills are folders of instructions and scripts for particular kinds of work. When the task
matches one below, call activate_skill with its name before starting, then follow it.
"""


def tool_names(declared: Iterable[str]) -> frozenset[str]:
    """Our tool names for an ``allowed-tools`` list (``Bash(git:*)`` → ``shell``)."""
    out = set()
    for item in declared:
        for word in re.split(r"[,\s]+(?![^()]*\))", item.strip()):
            name = word.split("(", 1)[0].strip()
            if name:
                out.add(FOREIGN_NAMES.get(name.lower(), name))
    return frozenset(out)


def catalogue(library: SkillLibrary, budget_tokens: int = CATALOGUE_TOKENS) -> str:
    """The skills part of the system prompt ("" when no skill is usable)."""
    lines = library.catalogue(budget_tokens).strip()
    return f"{CATALOGUE_HEAD}{lines}\n" if lines else ""


def skill_files(folder: Path, limit: int = FILES_SHOWN) -> list[str]:
    """Files under the skill's scripts/, references/ and assets/, relative to its folder."""
    found: list[str] = []
    for sub in FILE_FOLDERS:
        top = folder / sub
        if not top.is_dir() or top.is_symlink():
            continue
        for base, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(files):
                if not name.startswith("."):
                    found.append(str((Path(base) / name).relative_to(folder)))
    shown = found[:limit]
    if len(found) > limit:
        shown.append(f"… and {len(found) - limit} more (list_dir shows them)")
    return shown


def activation_text(skill: Skill, body: str, allowed: frozenset[str] | None) -> str:
    """What ``activate_skill`` returns: a header (folder, how to run scripts, files) and the body."""
    folder = str(skill.path)
    python = shlex.quote(sys.executable)
    lines = [
        f'Skill "{skill.name}" is active ({skill.source}).',
        f"Folder: {folder}",
        "Its own files (scripts/…, references/…) are relative to that folder. Run its scripts "
        "with the shell tool and hearth's own Python, which has the office libraries installed, "
        "from the workspace, so that input and output files are the user's:",
        f"  {python} {shlex.quote(folder + '/scripts/')}<script>.py ARGS",
        "Write outputs into the workspace, never into the skill folder.",
    ]
    files = skill_files(skill.path)
    if files:
        lines.append("Files (read one with read_file and its full path when the steps need it):")
        lines += [f"  {name}" for name in files]
    if allowed is not None:
        tools = ", ".join(sorted(allowed | ALWAYS_ALLOWED))
        lines.append(f"While this skill is active you may only call: {tools}.")
    return "\n".join(lines) + "\n\n---\n\n" + body.strip() + "\n"


class SkillState:
    """One session's skills: the library, the active skill, and the read-only skill folders."""

    def __init__(self, library: SkillLibrary, recorded: Mapping[str, Any] | None = None) -> None:
        self.library = library
        self._lock = threading.Lock()
        self.active: str | None = None
        self.allowed: frozenset[str] | None = None
        if isinstance(recorded, Mapping) and recorded.get("name"):
            self.active = str(recorded["name"])
            tools = recorded.get("allowed_tools")
            self.allowed = None if tools is None else frozenset(map(str, tools))
        self._reader: SafeFS | None = None
        self._reader_built = False

    def fork(self) -> SkillState:
        """The same skills for a subagent: it starts with the parent's narrowing, then goes its own way."""
        child = SkillState(self.library, self.recorded())
        child._reader, child._reader_built = self._reader, self._reader_built
        return child

    def recorded(self) -> dict[str, Any] | None:
        """The checkpoint's ``active_skill`` value."""
        if self.active is None:
            return None
        allowed = None if self.allowed is None else sorted(self.allowed)
        return {"name": self.active, "allowed_tools": allowed}

    # ---------------------------------------------------------- narrowing
    def allows(self, tool_name: str) -> bool:
        return self.allowed is None or tool_name in self.allowed or tool_name in ALWAYS_ALLOWED

    def refusal(self, tool_name: str) -> str:
        tools = ", ".join(sorted((self.allowed or frozenset()) | ALWAYS_ALLOWED))
        return (
            f"{tool_name} is not allowed while the skill {self.active!r} is active "
            f"(its allowed-tools); you may call: {tools}. Activating another skill changes this."
        )

    # ----------------------------------------------------------- activating
    def load(self, name: str) -> tuple[Skill, str, frozenset[str] | None]:
        """The usable skill ``name``, its body and its allowed tools; HearthError otherwise."""
        skill = self.library.get(name)
        if not skill.ok:
            problems = "; ".join(skill.problems) or "it is broken"
            raise ToolError(f"the skill {name!r} cannot be used: {problems}")
        body = self.library.body(name)
        allowed = None if skill.allowed_tools is None else tool_names(skill.allowed_tools)
        return skill, body, allowed

    def activate(self, name: str, session: Session | None = None) -> str:
        """Make ``name`` the active skill (recorded in ``session``'s checkpoint); its text."""
        skill, body, allowed = self.load(name)
        with self._lock:
            self.active, self.allowed = skill.name, allowed
            if session is not None:
                # Why: a resumed session keeps the skill, and its narrowing, it had.
                business = session.load().business
                session.checkpoint(business.replace(active_skill=self.recorded()))
        return activation_text(skill, body, allowed)

    # -------------------------------------------------------------- reading
    def reader(self) -> SafeFS | None:
        """A confinement over the usable skills' folders (read-only by use), None without any."""
        with self._lock:
            if not self._reader_built:
                self._reader_built = True
                try:
                    folders = [s.path for s in self.library.list() if s.ok and s.path.is_dir()]
                except HearthError:
                    folders = []
                self._reader = SafeFS(folders) if folders else None
            return self._reader

    def reader_for(self, path: str | Path) -> SafeFS | None:
        """The skill reader when ``path`` is an absolute path inside a skill folder."""
        text = os.fspath(path)
        if not os.path.isabs(text):
            return None
        fs = self.reader()
        if fs is None:
            return None
        try:
            fs.display(text)
        except HearthError:
            return None
        return fs


@tool(read_only=True, alone=True, offered=lambda ctx: ctx.skills is not None)
def activate_skill(
    ctx: ToolContext,
    name: Annotated[
        str, Field(description="The skill's name, as the catalogue lists it", min_length=1)
    ],
) -> str:
    """Load a skill's instructions (the catalogue in your instructions lists the skills) and
    make it the active skill. The answer says where its folder is, how to run its scripts
    and which reference files it has; read those with read_file when you need them."""
    assert ctx.skills is not None
    return ctx.skills.activate(name, ctx.session)


def check_skill(library: SkillLibrary, name: str) -> None:
    """Raise a HearthError when ``name`` is not a usable skill (before any session exists)."""
    SkillState(library).load(name)
