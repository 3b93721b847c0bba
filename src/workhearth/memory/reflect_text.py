"""The text side of reflection: what the model is told, and how its reply becomes lines.

Pure functions over lists of lines, no files and no locks (those live in
:mod:`workhearth.memory.reflect`), so each rule here is easy to test on its own.
"""

from __future__ import annotations

import re

from workhearth.errors import UsageError
from workhearth.memory.bank import validate
from workhearth.memory.entries import ID_RE, EntrySpan, format_entry

EXCERPT_CHARS = 700

DISTILL_SYSTEM = """\
You distill one day's working log into long-term memory.
Reply with the facts worth remembering after this day (decisions, preferences, how \
things work, open problems), one per line, each line starting with "- ", as plain \
sentences without ids. Leave out chatter and what only mattered that day.
If nothing is worth keeping, reply with the single word NONE."""

REWRITE_SYSTEM = """\
You tidy a long-term memory file. Each entry is a Markdown list item that ends with \
its id, like "- The user prefers tabs. ^m-7k2q9x4d".
Merge entries that say the same thing, drop facts that are stale or contradicted by \
newer ones, and keep everything else as it is.
End every entry you keep with its id, unchanged; when you merge entries, keep the id \
of one of them. Write a genuinely new entry as "- text" without an id.
Lines without an id were written by the user: they stay as they are; do not repeat them.
Reply with the list of entries only, one "- " item per entry, nothing else."""

# Why: models often add a full stop or bold after the id; accept it rather than lose the id.
_LOOSE_ID = re.compile(r"\s*\^(m-[0-9a-z]{8})\W*$")


def norm(text: str) -> str:
    """Text compared for sameness: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def parse_items(reply: str) -> list[tuple[str, str | None]]:
    """The ``- `` list items of a model reply as (content, id or None); other lines are ignored."""
    raw: list[list[str]] = []
    current: list[str] | None = None
    for line in reply.splitlines():
        if line.startswith(("- ", "* ")):
            current = [line[2:]]
            raw.append(current)
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line[2:])
        else:
            current = None
    items: list[tuple[str, str | None]] = []
    for body in raw:
        m = _LOOSE_ID.search(body[-1])
        if m:
            body[-1] = body[-1][: m.start()]
        content = "\n".join(body).strip()
        if content:
            items.append((content, m.group(1) if m else None))
    return items


def parse_facts(reply: str) -> list[str] | None:
    """Facts of a distillation reply; ``[]`` for an explicit NONE, None for a reply without any."""
    if reply.strip().strip(".").upper() == "NONE":
        return []
    return [content for content, _id in parse_items(reply)] or None


def clean(content: str) -> str | None:
    """Content fit to store (secrets redacted), or None when it breaks a bank limit."""
    try:
        return validate(content, "normal", [], [], allow_redact=True)[0]
    except UsageError:
        return None


def plan_rewrite(
    lines: list[str], spans: dict[str, EntrySpan], items: list[tuple[str, str | None]]
) -> tuple[dict[str, str], list[str], list[str]]:
    """(kept id → content, new contents, dropped ids) from the model's items.

    An item carrying an id of the file keeps that entry (the first time; a repeat
    counts as new text). Anything else is new, unless it repeats a line already
    there (a user's hand-written line included) or breaks a bank limit.
    """
    entry_lines = {k for span in spans.values() for k in range(span.start, span.end)}
    seen = {norm(x[2:]) for k, x in enumerate(lines) if k not in entry_lines and x[:2] == "- "}
    kept: dict[str, str] = {}
    fresh: list[str] = []
    for content, entry_id in items:
        if entry_id in spans and entry_id not in kept:
            old = spans[entry_id].content
            kept[entry_id] = old if norm(content) == norm(old) else clean(content) or old
        elif norm(content) not in seen and (text := clean(content)) is not None:
            fresh.append(text)
        seen.add(norm(content))
    return kept, fresh, [i for i in spans if i not in kept]


def rebuild(lines: list[str], spans: dict[str, EntrySpan], kept: dict[str, str]) -> list[str]:
    """``lines`` with kept entries (re)written in place, dropped ones cut, all else as it was."""
    by_start = {span.start: span for span in spans.values()}
    out: list[str] = []
    k = 0
    while k < len(lines):
        span = by_start.get(k)
        if span is None:
            out.append(lines[k])
            k += 1
            continue
        if span.entry_id in kept:
            out += format_entry(kept[span.entry_id], span.entry_id)
        k = span.end
    return out


def append_entries(rel: str, lines: list[str], items: list[tuple[str, str]]) -> list[str]:
    """``lines`` with (content, id) entries appended the way ``LayerStore.add_entry`` does."""
    if not items:
        return lines
    if not lines:
        lines = [f"# {'User' if rel.upper() == 'USER.MD' else 'Memory'}", ""]
    elif lines[-1].strip() and not (lines[-1].startswith("- ") or ID_RE.search(lines[-1])):
        lines = [*lines, ""]
    out = list(lines)
    for content, entry_id in items:
        out += format_entry(content, entry_id)
    return out


def excerpt(text: str) -> str:
    """Whole lines of ``text`` up to :data:`EXCERPT_CHARS` (a provenance snippet)."""
    out: list[str] = []
    used = 0
    for line in text.splitlines():
        if used + len(line) + 1 > EXCERPT_CHARS:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) or text[:EXCERPT_CHARS]
