"""The one check every text that enters memory passes: plain text, no control characters.

Content, tags, provenance (snippet, session and message ids, origin), search queries
and edits go through :func:`require_plain_text`, whichever door they came in by (CLI,
REST, MCP, team bank). Why so strict: a NUL or another control character in a
Markdown file is what a binary file looks like, and it made a whole project's memory
disappear (issue #17); an escape sequence rewrites the user's terminal when an entry
is shown; a lone surrogate cannot be written as UTF-8 at all.
"""

from __future__ import annotations

import re

from workhearth.errors import UsageError

# Why tab and newline only: every other C0 control, DEL and the C1 controls are binary
# residue or terminal commands, never part of a sentence a user confirmed.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LABEL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def newlines_to_lf(text: str) -> str:
    """``\\r\\n`` (a Windows client, a pasted file) read as the newline it is."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def require_plain_text(text: str, what: str, *, one_line: bool = False) -> None:
    """Refuse ``text`` holding a control character (tab and newline aside) or a lone surrogate.

    ``one_line``: a label (a tag, an id, an origin) takes no tab or newline either.
    The message names the character by its code point and its position, never the
    text itself, so it prints as one clean line.
    """
    m = (_LABEL_CONTROL if one_line else _CONTROL).search(text)
    if m is not None:
        raise UsageError(
            f"the {what} holds a control character U+{ord(m.group()):04X} at position "
            f"{m.start() + 1}; memory takes plain text"
            + ("" if one_line else " (tab and newline allowed)"),
            code="control_character",
            params={"field": what, "position": m.start() + 1},
        )
    m = _SURROGATE.search(text)
    if m is not None:
        raise UsageError(
            f"the {what} is not valid UTF-8 text (a lone surrogate U+{ord(m.group()):04X} "
            f"at position {m.start() + 1})",
            code="not_utf8",
            params={"field": what},
        )
