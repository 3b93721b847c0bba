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
Claude Code skills use (``Bash``, ``Read``, ``Bash(git:*)``…), mapped to ours. A
pattern in parentheses narrows the shell as Claude Code does: with ``Bash(python:*)``
every simple command of a command line (split on ``;`` ``&&`` ``||`` ``|`` and
newlines, and looked for inside ``$(…)``, backticks, ``bash -c`` and ``eval``, by
:func:`~workhearth.agent.approval.simple_commands`) must start with ``python``, else
the call is refused naming the pattern; a bare ``Bash`` allows every command. On
other tools a pattern allows the whole tool. The mode and approvals still judge each
call. Activating another skill replaces the active one; a skill without
``allowed-tools`` lifts the narrowing. The active skill, its allowed tools and shell
patterns are recorded in the session's checkpoint (``active_skill``), so a resumed
session keeps the narrowing it had, even when the skill changed on disk meanwhile.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from workhearth.agent.approval import simple_commands
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


SHELL = "shell"
# Why one program: `python`, `python3` and hearth's own interpreter (the activation
# header's `/…/bin/python3`) are what a skill that allows `python` means.
_PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")


def _entries(declared: Iterable[str]) -> Iterable[tuple[str, str | None]]:
    """``(our tool name, pattern or None)`` for each ``allowed-tools`` entry."""
    # Why here: ``hearth --help`` must not import the skills package.
    from workhearth.skills.validate import split_tools

    for item in declared:
        for word in split_tools(item):
            name, paren, rest = word.partition("(")
            name = name.strip()
            if name:
                ours = FOREIGN_NAMES.get(name.lower(), name)
                yield ours, rest.removesuffix(")").strip() if paren else None


def tool_names(declared: Iterable[str]) -> frozenset[str]:
    """Our tool names for an ``allowed-tools`` list (``Bash(git:*)`` → ``shell``)."""
    return frozenset(name for name, _ in _entries(declared))


def shell_patterns(declared: Iterable[str]) -> tuple[str, ...] | None:
    """The command patterns ``allowed-tools`` gives the shell (``Bash(python:*)`` →
    ``python:*``); None when it allows the shell whole (a bare ``Bash``) or not at all."""
    patterns: list[str] = []
    for name, pattern in _entries(declared):
        if name != SHELL:
            continue
        if pattern is None:
            return None
        patterns.append(pattern)
    return tuple(patterns) or None


def _program(word: str) -> str:
    name = os.path.basename(word)
    return "python" if _PYTHON.fullmatch(name) else name


def command_matches(pattern: str, words: Sequence[str]) -> bool:
    """Whether one simple command (its words) fits a Claude Code shell pattern.

    ``git:*`` and ``git *``: the words start with ``git`` (then anything or nothing);
    ``git status``: exactly those words; ``*`` elsewhere: a glob over the words.
    """
    text = pattern.strip()
    if text.endswith(":*"):
        text = text[:-2].rstrip() + " *"
    want = text.split()
    if not want or not words:
        return False
    if want[0] != "*":
        want[0] = _program(want[0])
    got = [_program(words[0]), *words[1:]]
    if want[-1] == "*":
        head = want[:-1]
        return len(got) >= len(head) and all(map(fnmatch.fnmatchcase, got, head))
    if "*" in text:
        return fnmatch.fnmatchcase(" ".join(got), " ".join(want))
    return got == want


def refused_part(command: str, patterns: Sequence[str]) -> str | None:
    """The first simple command of ``command`` no pattern allows, or None when all fit."""
    for words in simple_commands(command):
        if not any(command_matches(p, words) for p in patterns):
            return shlex.join(words)
    return None


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


def activation_text(
    skill: Skill,
    body: str,
    allowed: frozenset[str] | None,
    commands: Sequence[str] | None = None,
) -> str:
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
        f"Where the steps below say PYTHON SKILL_DIR/scripts/NAME.py, PYTHON is {python} "
        f"and SKILL_DIR is {shlex.quote(folder)}.",
        "Write outputs into the workspace, never into the skill folder.",
    ]
    files = skill_files(skill.path)
    if files:
        lines.append("Files (read one with read_file and its full path when the steps need it):")
        lines += [f"  {name}" for name in files]
    if allowed is not None:
        tools = ", ".join(sorted(allowed | ALWAYS_ALLOWED))
        lines.append(f"While this skill is active you may only call: {tools}.")
        if SHELL in allowed and commands is not None:
            shown = " ".join(f"Bash({p})" for p in commands)
            lines.append(f"Every part of a shell command must match: {shown}.")
    return "\n".join(lines) + "\n\n---\n\n" + body.strip() + "\n"


class SkillState:
    """One session's skills: the library, the active skill, and the read-only skill folders."""

    def __init__(self, library: SkillLibrary, recorded: Mapping[str, Any] | None = None) -> None:
        self.library = library
        self._lock = threading.Lock()
        self.active: str | None = None
        self.allowed: frozenset[str] | None = None
        self.commands: tuple[str, ...] | None = None  # shell patterns; None: any command
        if isinstance(recorded, Mapping) and recorded.get("name"):
            self.active = str(recorded["name"])
            tools = recorded.get("allowed_tools")
            self.allowed = None if tools is None else frozenset(map(str, tools))
            patterns = recorded.get("shell_patterns")
            self.commands = None if patterns is None else tuple(map(str, patterns))
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
        out: dict[str, Any] = {"name": self.active, "allowed_tools": allowed}
        if self.commands is not None:
            out["shell_patterns"] = list(self.commands)
        return out

    # ---------------------------------------------------------- narrowing
    def allows(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> bool:
        """Whether ``tool_name`` may be offered, and with ``arguments``, called so."""
        if not (self.allowed is None or tool_name in self.allowed or tool_name in ALWAYS_ALLOWED):
            return False
        return self._refused_command(tool_name, arguments) is None

    def _refused_command(self, tool_name: str, arguments: Mapping[str, Any] | None) -> str | None:
        if tool_name != SHELL or self.commands is None or not isinstance(arguments, Mapping):
            return None
        command = arguments.get("command")
        # Why: a command that is not text is refused by the tool's own validation.
        return refused_part(command, self.commands) if isinstance(command, str) else None

    def refusal(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> str:
        part = self._refused_command(tool_name, arguments)
        if part is not None and self.commands is not None:
            patterns = " ".join(f"Bash({p})" for p in self.commands)
            return (
                f"the command {part!r} is not allowed while the skill {self.active!r} is "
                f"active: its allowed-tools let the shell run only {patterns}; every part "
                "of a command line must match. Activating another skill changes this."
            )
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
        commands = None if allowed is None else shell_patterns(skill.allowed_tools or ())
        with self._lock:
            self.active, self.allowed, self.commands = skill.name, allowed, commands
            if session is not None:
                # Why: a resumed session keeps the skill, and its narrowing, it had.
                business = session.load().business
                session.checkpoint(business.replace(active_skill=self.recorded()))
        return activation_text(skill, body, allowed, commands)

    # -------------------------------------------------------------- reading
    def folders(self) -> list[Path]:
        """The usable skills' folders: what ``activate_skill`` may point the model at."""
        try:
            return [s.path for s in self.library.list() if s.ok and s.path.is_dir()]
        except HearthError:
            return []

    def reader(self) -> SafeFS | None:
        """A confinement over the usable skills' folders (read-only by use), None without any."""
        with self._lock:
            if not self._reader_built:
                self._reader_built = True
                folders = self.folders()
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
