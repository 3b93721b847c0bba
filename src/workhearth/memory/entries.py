"""Entries hearth writes into Markdown: one list item each, ending in a visible id.

An entry looks like ``- The user prefers tabs. ^m-7k2q9x4d`` (the Obsidian
block-id form, readable in any editor). Continuation lines are indented by two
spaces; the id ends the entry's last line. Lines a user wrote by hand carry no
id and are found by path and line instead; hearth never rewrites them.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ID_RE = re.compile(r"\s\^(m-[0-9a-z]{8})\s*$")
_ITEM_START = re.compile(r"^- ")


def new_entry_id() -> str:
    return "m-" + "".join(secrets.choice(ID_ALPHABET) for _ in range(8))


def format_entry(content: str, entry_id: str) -> list[str]:
    """Lines of a list item holding ``content`` and ending with the id."""
    lines = content.strip().splitlines() or [""]
    out = ["- " + lines[0].rstrip()]
    # Why: a blank line would end the list item; an indented empty line keeps it whole.
    out += ["  " + line.rstrip() for line in lines[1:]]
    out[-1] = f"{out[-1]} ^{entry_id}"
    return out


@dataclass
class EntrySpan:
    """Where an entry sits in a file: lines [start, end) (0-based), and its content."""

    entry_id: str
    start: int
    end: int
    content: str


def find_entries(lines: list[str]) -> dict[str, EntrySpan]:
    """Every id-carrying list item in ``lines`` (a file's lines without newlines)."""
    found: dict[str, EntrySpan] = {}
    start: int | None = None
    for i, line in enumerate(lines):
        if line.startswith("- "):
            start = i
        elif not line.startswith("  "):
            start = None  # only indented lines continue an item
        # Why the substring test first: a save reads a 1,000-entry file several times.
        m = ID_RE.search(line) if "^m-" in line else None
        if not m:
            continue
        if start is None:
            start = _item_start_before(lines, i)
        if start is None:
            continue
        if start == i and m.start() >= 2:  # one line: the text before its id
            body = [line[2 : m.start()]]
        else:
            body = [lines[start][2:]] + [
                x[2:] if x.startswith("  ") else x for x in lines[start + 1 : i + 1]
            ]
            body[-1] = ID_RE.sub("", body[-1])
        found[m.group(1)] = EntrySpan(
            m.group(1), start, i + 1, "\n".join(x.rstrip() for x in body).strip()
        )
        start = None
    return found


def _item_start_before(lines: list[str], i: int) -> int | None:
    """The list item an indented id line belongs to, across blank lines an editor
    may have stripped of their indentation."""
    if not lines[i].startswith("  "):
        return None
    j = i - 1
    while j >= 0:
        if _ITEM_START.match(lines[j]):
            return j
        if lines[j].strip() and not lines[j].startswith("  "):
            return None
        j -= 1
    return None


def written_span(content: str, entry_id: str) -> EntrySpan:
    """The entry :func:`format_entry` writes, as :func:`find_entries` reads it back
    (lines counted from the entry's first)."""
    return find_entries(format_entry(content, entry_id))[entry_id]


def strip_ids(text: str) -> str:
    """Text without the trailing id markers (for display and token counts)."""
    return "\n".join(ID_RE.sub("", line) for line in text.splitlines())


def entry_id_of(line: str) -> str | None:
    m = ID_RE.search(line)
    return m.group(1) if m else None
