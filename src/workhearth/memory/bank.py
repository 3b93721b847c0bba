"""The bank face of memory: validated save / list / edit / delete with provenance.

Rules from a shipped product (DESIGN §4): a saved entry is a plain sentence the
user confirmed; limits on every field; secrets are refused (or redacted when the
caller asks) before anything is stored.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from workhearth.errors import UsageError
from workhearth.memory.plain_text import newlines_to_lf, require_plain_text

Level = Literal["critical", "normal", "low"]
LEVELS: tuple[Level, ...] = ("critical", "normal", "low")
LEVEL_RANK = {"critical": 0, "normal": 1, "low": 2}
CONTENT_MAX = 8_000
TAGS_MAX, TAG_MAX = 32, 64
SNIPPETS_MAX, SNIPPET_MAX = 16, 4_000
ORIGIN_MAX = 64
LIST_LIMIT_MAX = 100


@dataclass
class Provenance:
    snippet: str
    session_id: str | None = None
    message_id: str | None = None
    origin: str | None = None


@dataclass
class Entry:
    id: str
    content: str
    level: str
    tags: list[str]
    layer: str
    path: str
    line: int
    created: float
    updated: float
    source: str
    provenance: list[dict[str, Any]] = field(default_factory=list)
    pending: bool = False
    # Why: not part of the entry (never in its JSON): tells the caller that save
    # found this very sentence already saved and returned it instead of a copy.
    existed: bool = field(default=False, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["existed"]
        return data


def _check_secret(text: str, what: str, allow_redact: bool) -> str:
    # Why here: only writes scan; compiling the rules costs a search or a list ~8 ms.
    from workhearth.memory.secrets import find_secrets, redact

    kinds = find_secrets(text)
    if not kinds:
        return text
    if allow_redact:
        return redact(text)
    raise UsageError(
        f"refused: the {what} looks like it holds a secret ({', '.join(kinds)}); "
        "remove it, or ask for it to be stored masked",
        code="memory_secret",
        params={"field": what, "kinds": ", ".join(kinds)},
        cli_hint="--redact",
    )


def validate(
    content: str,
    level: str,
    tags: list[str],
    contexts: Sequence[Provenance | dict[str, Any]],
    allow_redact: bool = False,
) -> tuple[str, list[str], list[dict[str, Any]]]:
    """Check limits and secrets; returns the content, tags and provenance to store."""
    content = newlines_to_lf(content).strip()
    require_plain_text(content, "content")
    if not content:
        raise UsageError("memory content is empty", code="memory_empty")
    if len(content) > CONTENT_MAX:
        raise UsageError(
            f"memory content is {len(content)} characters; the limit is {CONTENT_MAX}",
            code="text_too_long",
            params={"field": "content", "limit": CONTENT_MAX},
        )
    if level not in LEVELS:
        raise UsageError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    if len(tags) > TAGS_MAX:
        raise UsageError(
            f"at most {TAGS_MAX} tags", code="too_many", params={"field": "tags", "limit": TAGS_MAX}
        )
    clean_tags = []
    for tag in tags:
        tag = tag.strip()
        if not tag or len(tag) > TAG_MAX:
            raise UsageError(
                f"a tag must have 1 to {TAG_MAX} characters: {tag[:80]!r}",
                code="tag_length",
                params={"limit": TAG_MAX},
            )
        require_plain_text(tag, "tag", one_line=True)
        clean_tags.append(_check_secret(tag, "tag", allow_redact))
    if len(contexts) > SNIPPETS_MAX:
        raise UsageError(f"at most {SNIPPETS_MAX} provenance snippets")
    provenance = []
    for ctx in contexts:
        item = asdict(ctx) if isinstance(ctx, Provenance) else dict(ctx)
        snippet = newlines_to_lf(str(item.get("snippet") or ""))
        require_plain_text(snippet, "snippet")
        if len(snippet) > SNIPPET_MAX:
            raise UsageError(
                f"a provenance snippet is {len(snippet)} characters; the limit is {SNIPPET_MAX}"
            )
        item["snippet"] = _check_secret(snippet, "snippet", allow_redact)
        for key, what in (
            ("session_id", "session id"),
            ("message_id", "message id"),
            ("origin", "origin"),
        ):
            if item.get(key) is None:
                continue
            value = str(item[key])
            require_plain_text(value, what, one_line=True)
            if key == "origin" and len(value) > ORIGIN_MAX:
                raise UsageError(f"a provenance origin has at most {ORIGIN_MAX} characters")
            # Why: provenance is stored and shown like content, so a key pasted there leaks too.
            item[key] = _check_secret(value, what, allow_redact)
        provenance.append(
            {k: item.get(k) for k in ("snippet", "session_id", "message_id", "origin")}
        )
    content = _check_secret(content, "content", allow_redact)
    return content, clean_tags, provenance


def encode_cursor(created: float, entry_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created!r}|{entry_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, entry_id = raw.split("|", 1)
        return float(created), entry_id
    except (ValueError, UnicodeDecodeError):
        raise UsageError("bad cursor; use the next_cursor a previous list returned") from None
