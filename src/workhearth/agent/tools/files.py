"""File tools: ``read_file``, ``write_file``, ``edit_file``, ``list_dir``, ``delete``.

All go through :class:`~workhearth.agent.safefs.SafeFS`, so they touch only the
authorized folders. Overwrites and edits keep the previous version in the
session's file history; deletes go to the trash.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

from pydantic import BaseModel, Field

from workhearth.agent.fences import CredentialStore
from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.registry import tool
from workhearth.errors import NotFoundError

LINE_LIMIT = 2_000  # characters kept of one line
READ_OUTPUT_LIMIT = 64_000  # read_file pages by lines, so it may show more than other tools
LIST_LIMIT = 500
_BINARY_PROBE = 8_192

PathArg = Annotated[
    str,
    Field(
        description="Path relative to the workspace, or absolute inside an authorized folder",
        min_length=1,
    ),
]


def _tool_output(ctx: ToolContext, path: str) -> str | None:
    """The text of one of this session's saved tool outputs, when ``path`` names one."""
    p = Path(path)
    folder = ctx.session.folder / "tool-outputs"
    if p.is_absolute() and p.parent == folder and p.suffix == ".txt":
        try:
            return ctx.session.read_tool_output(p.stem)
        except FileNotFoundError:
            raise NotFoundError(f"no such file: {path}") from None
    return None


def _page(lines: list[str], offset: int, more: bool) -> str:
    out = []
    for n, line in enumerate(lines, offset):
        line = line.rstrip("\r\n")
        if len(line) > LINE_LIMIT:
            line = line[:LINE_LIMIT] + f"…[line cut, {len(line)} characters]"
        out.append(f"{n:>6}\t{line}")
    if more:
        out.append(f"[more lines follow; continue with offset={offset + len(lines)}]")
    return "\n".join(out)


@contextlib.contextmanager
def _open_for_reading(ctx: ToolContext, path: str) -> Iterator[BinaryIO]:
    """``path`` open for reading; a credential store only after the user's yes (agent mode).

    Why (issue 17): what read_file returns goes to the model provider. Ask mode
    refuses a credential store and quest mode hides it (the fences raise); agent
    mode asks, saying so, and never offers "always".
    """
    fs = ctx.read_fs(path)
    with contextlib.ExitStack() as stack:
        try:
            fh = stack.enter_context(fs.open_read(path))
        except CredentialStore as exc:
            if ctx.mode != "agent":
                raise
            _ask_for_credentials(ctx, path, exc)
            fh = stack.enter_context(fs.open_read(path, credentials_ok=True))
        yield fh


def _ask_for_credentials(ctx: ToolContext, path: str, exc: CredentialStore) -> None:
    assert ctx.gate is not None
    verdict = ctx.gate.decide(
        "read_file",
        read_only=False,
        summary=f"read {ctx.fs.display(path)}, in a credential store ({exc.store}): "
        "its content would go to the model provider",
        arguments={"path": path},
        call_id=ctx.call_id,
        allow_always=False,
    )
    ctx.decided = verdict.decision
    if verdict.decision == "not-asked":
        raise ToolError(
            f"Not read: {ctx.show(path)} is in a credential store and nobody was there "
            "to allow sending it to the model provider"
        )
    if not verdict.allowed:
        raise ToolError(
            f"The user denied reading {ctx.show(path)} (a credential store); do not retry it"
        )


@tool(read_only=True, output_limit=READ_OUTPUT_LIMIT)
def read_file(
    ctx: ToolContext,
    path: PathArg,
    offset: Annotated[int, Field(ge=1, description="First line to show, 1-based")] = 1,
    limit: Annotated[int, Field(ge=1, le=5_000, description="How many lines to show")] = 2_000,
) -> str:
    """Read a text file. Lines come numbered like `cat -n` (number, tab, text); the numbers
    are not part of the file. Page through big files with offset and limit. A path
    given in a cut tool output (under tool-outputs/) can be read here too."""
    saved = _tool_output(ctx, path)
    if saved is not None:
        lines = saved.splitlines()
        page = lines[offset - 1 : offset - 1 + limit]
        return _page(page, offset, offset - 1 + limit < len(lines)) or "(no lines there)"
    with _open_for_reading(ctx, path) as fh:
        probe = fh.peek(_BINARY_PROBE)[:_BINARY_PROBE] if hasattr(fh, "peek") else b""
        if b"\0" in probe:
            size = os.fstat(fh.fileno()).st_size
            return f"{ctx.show(path)} is a binary file ({size} bytes); not shown"
        page = []
        more = False
        for n, raw in enumerate(fh, 1):
            if n < offset:
                continue
            if len(page) >= limit:
                more = True
                break
            page.append(raw.decode("utf-8", "replace"))
    if not page:
        return "(empty file)" if offset == 1 else f"(the file has fewer than {offset} lines)"
    return _page(page, offset, more)


def _keep_previous(
    ctx: ToolContext, path: str, new: bytes, expected: bytes | None = None
) -> tuple[Callable[[bytes | None], None], list[int]]:
    shown = ctx.fs.display(path)
    saved: list[int] = []

    def hook(previous: bytes | None) -> None:
        if expected is not None and previous != expected:
            raise ToolError(f"{ctx.show(path)} changed while it was being edited; read it again")
        if previous is not None:
            assert ctx.history is not None
            item = ctx.history.save(shown, previous, call_id=ctx.call_id or None, replaced_by=new)
            saved.append(item.n)

    return hook, saved


def _preview_write(ctx: ToolContext, args: BaseModel) -> str:
    path, content = args.path, args.content  # type: ignore[attr-defined]
    verb = "overwrite" if ctx.fs.exists(path) else "create"
    head = content if len(content) <= 400 else content[:400] + f"… ({len(content)} characters)"
    return f"{verb} {ctx.fs.display(path)} with:\n{head}"


@tool(read_only=False, preview=_preview_write)
def write_file(
    ctx: ToolContext,
    path: PathArg,
    content: Annotated[str, Field(description="The whole new content of the file")],
) -> str:
    """Create a file or replace its whole content (missing folders are created). The previous
    content is kept in the session's file history. To change part of a file, use edit_file."""
    data = content.encode("utf-8")
    hook, saved = _keep_previous(ctx, path, data)
    previous = ctx.fs.write_bytes(path, data, before_replace=hook)
    if previous is None:
        return f"Created {ctx.show(path)} ({len(data)} bytes)"
    kept = f"; the previous version is file-history #{saved[0]}" if saved else ""
    return f"Replaced {ctx.show(path)} ({len(data)} bytes){kept}"


def _preview_edit(ctx: ToolContext, args: BaseModel) -> str:
    a = args
    return (
        f"edit {ctx.fs.display(a.path)}"  # type: ignore[attr-defined]
        f"{' (every occurrence)' if a.replace_all else ''}:\n"  # type: ignore[attr-defined]
        f"--- replace\n{a.old_string[:600]}\n+++ with\n{a.new_string[:600]}"  # type: ignore[attr-defined]
    )


def _lines_of(text: str, needle: str, most: int = 5) -> list[int]:
    found: list[int] = []
    start = 0
    while len(found) < most:
        i = text.find(needle, start)
        if i < 0:
            break
        found.append(text.count("\n", 0, i) + 1)
        start = i + 1
    return found


@tool(read_only=False, preview=_preview_edit)
def edit_file(
    ctx: ToolContext,
    path: PathArg,
    old_string: Annotated[str, Field(description="Exact text to replace, as in the file")],
    new_string: Annotated[str, Field(description="Text to put in its place")],
    replace_all: Annotated[bool, Field(description="Replace every occurrence")] = False,
) -> str:
    """Replace an exact piece of text in a file. old_string must occur exactly once (give
    more surrounding lines to make it unique) unless replace_all is true. Copy it from
    read_file output without the line-number prefix. The previous version is kept."""
    if not old_string:
        raise ToolError("old_string is empty; use write_file to create or replace a whole file")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same; nothing to change")
    before = ctx.fs.read_bytes(path)
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{ctx.show(path)} is not UTF-8 text; edit_file cannot change it") from None
    count = text.count(old_string)
    if count == 0:
        hint = ""
        if "\r\n" in text and "\n" in old_string and "\r\n" not in old_string:
            hint = " (the file uses CRLF line endings)"
        raise ToolError(f"old_string was not found in {ctx.show(path)}{hint}; read the file again")
    if count > 1 and not replace_all:
        lines = ", ".join(map(str, _lines_of(text, old_string)))
        raise ToolError(
            f"old_string occurs {count} times in {ctx.show(path)} (lines {lines}); add "
            "surrounding text to make it unique, or set replace_all"
        )
    new_text = (
        text.replace(old_string, new_string)
        if replace_all
        else text.replace(old_string, new_string, 1)
    )
    data = new_text.encode("utf-8")
    hook, saved = _keep_previous(ctx, path, data, expected=before)
    ctx.fs.write_bytes(path, data, before_replace=hook)
    first = _lines_of(new_text, new_string, 1) if new_string else _lines_of(text, old_string, 1)
    at = f" at line {first[0]}" if first else ""
    done = count if replace_all else 1
    kept = f"; the previous version is file-history #{saved[0]}" if saved else ""
    return f"Edited {ctx.show(path)}: {done} replacement{'s' if done > 1 else ''}{at}{kept}"


@tool(read_only=True)
def list_dir(
    ctx: ToolContext,
    path: Annotated[str, Field(description="Folder to list; the workspace by default")] = ".",
) -> str:
    """List a folder: sub-folders end with '/', links show their target, files their size."""
    lines = []
    fs = ctx.read_fs(path)
    entries = fs.list_dir(path)
    base = path.rstrip("/") or "/"
    for entry in entries[:LIST_LIMIT]:
        if entry.kind == "dir":
            lines.append(entry.rel + "/")
        elif entry.kind == "symlink":
            target = fs.stat(f"{base}/{entry.rel}", follow=False).link
            lines.append(f"{entry.rel} -> {target}")
        elif entry.kind == "file":
            lines.append(f"{entry.rel}  ({entry.size} bytes)")
        else:
            lines.append(f"{entry.rel}  (special file)")
    if len(entries) > LIST_LIMIT:
        lines.append(f"[{len(entries) - LIST_LIMIT} more entries not shown]")
    return "\n".join(lines) if lines else f"{ctx.show(path)} is empty"


def _preview_delete(ctx: ToolContext, args: BaseModel) -> str:
    return f"move {ctx.fs.display(args.path)} to the trash (restorable)"  # type: ignore[attr-defined]


@tool(read_only=False, preview=_preview_delete)
def delete(ctx: ToolContext, path: PathArg) -> str:
    """Delete a file or folder by moving it to workhearth's trash, from which the user can
    restore it. A link is deleted itself, never its target."""
    item = ctx.fs.delete(
        path, reason=f"agent delete ({ctx.call_id or 'no call id'})", session=ctx.session.id
    )
    return (
        f"Moved {ctx.show(path)} to the trash (item {item.id}); "
        f"the user can restore it with `hearth trash restore {item.id}`"
    )
