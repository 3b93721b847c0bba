"""Search tools: ``glob`` (find files by name) and ``grep`` (find lines by regex).

Both walk with :meth:`SafeFS.walk`, so links are listed but never entered, and
both are bounded (results, files, bytes) so a huge tree cannot stall a turn.
Folders that are almost never what the user means (``.git``, ``node_modules``,
virtualenvs, caches) are skipped unless the search starts inside one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import Field

from workhearth.agent.safefs import WalkEntry, glob_regex
from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.registry import tool
from workhearth.errors import HearthError

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache", ".cache", ".idea"}
)
GLOB_LIMIT = 500
GREP_FILE_MAX = 4 * 1024 * 1024
GREP_FILES_MAX = 20_000
GREP_BYTES_MAX = 256 * 1024 * 1024
GREP_LINE_MAX = 300

FolderArg = Annotated[
    str, Field(description="Folder to search in; the workspace by default", min_length=1)
]


def _join(base: str, rel: str) -> str:
    return rel if base in (".", "./") else f"{base.rstrip('/')}/{rel}"


@tool(read_only=True)
def glob(
    ctx: ToolContext,
    pattern: Annotated[
        str,
        Field(
            description="Glob over paths relative to `path`: '**/*.py', 'src/*.{ts,tsx}', '*.md'",
            min_length=1,
        ),
    ],
    path: FolderArg = ".",
) -> str:
    """Find files and folders whose path matches a glob pattern. '**' spans folders, '*' and
    '?' stay within one name, '{a,b}' gives alternatives. Sorted by name, bounded."""
    found = ctx.fs.glob(pattern, path, skip=SKIP_DIRS, limit=GLOB_LIMIT + 1)
    if not found:
        return f"No paths under {ctx.show(path)} match {pattern!r}"
    lines = [ctx.show(_join(path, e.rel)) + ("/" if e.kind == "dir" else "") for e in found]
    if len(lines) > GLOB_LIMIT:
        lines = [*lines[:GLOB_LIMIT], f"[more than {GLOB_LIMIT} matches; narrow the pattern]"]
    return "\n".join(lines)


def _files(ctx: ToolContext, path: str, include: str | None) -> list[tuple[str, WalkEntry]]:
    info = ctx.fs.stat(path)
    if info.kind == "file":
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return [(path, WalkEntry(name, "file", info.size, info.mtime))]
    match: Callable[[str], re.Match[str] | None] | None = None
    if include:
        regex = glob_regex(include)
        if "/" in include:
            match = regex.fullmatch
        else:
            # Why: a pattern without a folder ('*.py') means "any file with that name".
            match = lambda rel: regex.fullmatch(rel.rsplit("/", 1)[-1])  # noqa: E731
    out = []
    for entry in ctx.fs.walk(path, skip=SKIP_DIRS):
        if entry.kind == "file" and (match is None or match(entry.rel)):
            out.append((_join(path, entry.rel), entry))
            if len(out) >= GREP_FILES_MAX:
                break
    return out


@tool(read_only=True)
def grep(
    ctx: ToolContext,
    pattern: Annotated[str, Field(description="Python regular expression", min_length=1)],
    path: Annotated[
        str, Field(description="File or folder to search; the workspace by default", min_length=1)
    ] = ".",
    include: Annotated[
        str | None, Field(description="Only files matching this glob, e.g. '*.py'")
    ] = None,
    ignore_case: bool = False,
    max_results: Annotated[int, Field(ge=1, le=1_000)] = 100,
) -> str:
    """Search file contents for a regular expression. Prints 'path:line: text' for each
    matching line. Binary files, files over 4 MB and folders like .git or node_modules
    are skipped."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"bad regular expression {pattern!r}: {exc}") from None
    files = _files(ctx, path, include)
    hits: list[str] = []
    scanned = skipped = 0
    budget = GREP_BYTES_MAX
    for full, entry in files:
        if entry.size > GREP_FILE_MAX or entry.size > budget:
            skipped += 1
            continue
        try:
            data = ctx.fs.read_bytes(full, GREP_FILE_MAX)
        except (OSError, HearthError):  # vanished, swapped for a link, unreadable
            skipped += 1
            continue
        budget -= len(data)
        scanned += 1
        if b"\0" in data[:8192]:
            continue
        shown = None
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if regex.search(line):
                shown = shown or ctx.show(full)
                text = line if len(line) <= GREP_LINE_MAX else line[:GREP_LINE_MAX] + "…"
                hits.append(f"{shown}:{n}: {text}")
                if len(hits) >= max_results:
                    break
        if len(hits) >= max_results:
            break
    notes = []
    if len(hits) >= max_results:
        notes.append(f"[stopped at {max_results} matches; narrow the search]")
    if skipped:
        notes.append(f"[{skipped} files skipped: too big or unreadable]")
    if not hits:
        return "\n".join([f"No matches for {pattern!r} in {scanned} files", *notes])
    return "\n".join([*hits, *notes])
