"""Read other agents' transcripts into canonical messages (DESIGN §3, "Interop").

Importers are pure parsers: they take a file and return an :class:`ImportedSession`;
writing it as a workhearth session is the session store's job. Two formats are
understood, each in its own module:

- ``claude-code``: Claude Code JSONL (``~/.claude/projects/*/*.jsonl``), see
  :mod:`.claude_code`;
- ``qwen-code``: Qwen Code chat recordings (``~/.qwen/projects/*/chats/*.jsonl``)
  and the older Gemini CLI JSON checkpoints, see :mod:`.qwen_code`.

:func:`detect_format` also recognises a workhearth ``bundle`` (a zip or tar file)
so callers can route it elsewhere; :func:`load` does not read bundles.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import ImportFormatError, NotFoundError, UsageError
from workhearth.models.messages import Message

FORMATS = ("claude-code", "qwen-code", "bundle")

# How many non-empty lines detect_format looks at before deciding.
_SNIFF_LINES = 64

# Record types only Claude Code writes (Qwen Code writes user/assistant/tool_result/system).
_CLAUDE_ONLY_TYPES = frozenset(
    {"progress", "file-history-snapshot", "summary", "queue-operation", "custom-title"}
)


@dataclass
class ImportedSession:
    """One conversation read from another tool, ready for the session store.

    ``messages`` is the main chain only, oldest first; each message carries
    ``"id"`` (the source message's uuid or id) when the source had one.
    Subagent conversations are kept apart in ``sidechains``.
    """

    source_id: str | None
    workspace: str | None
    title: str | None
    created: str | None
    model: str | None
    messages: list[Message]
    sidechains: list[ImportedSession]
    agent_id: str | None = None
    skipped_lines: int = 0  # lines that were not JSON and were skipped
    warnings: list[str] = field(default_factory=list)
    updated: str | None = None  # the newest timestamp the source holds
    # What was left out and why, for the importer's report: {"line": n | None, "reason": …}.
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def note_bad_lines(self, bad_lines: list[dict[str, Any]]) -> None:
        """Record the lines that were not JSON (from :func:`read_json_lines_noting`)."""
        bad = len(bad_lines)
        self.skipped_lines = bad
        self.skipped[:0] = bad_lines
        if bad:
            self.warnings.append(f"skipped {bad} line(s) that were not JSON")


def first_text(records: Iterable[dict[str, Any]], key: str) -> str | None:
    """The first non-empty string under ``key`` among ``records``."""
    for rec in records:
        value = rec.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def last_text(records: Iterable[dict[str, Any]], key: str) -> str | None:
    """The last non-empty string under ``key`` among ``records``."""
    found = None
    for rec in records:
        value = rec.get(key)
        if isinstance(value, str) and value:
            found = value
    return found


def last_model(messages: list[Message]) -> str | None:
    """The model that wrote the newest assistant message, if recorded."""
    for msg in reversed(messages):
        model = msg.get("model")
        if isinstance(model, str) and model:
            return model
    return None


def read_json_lines(path: Path) -> tuple[list[Any], int]:
    """Parse every line of ``path`` as JSON; return the values and how many lines failed.

    Blank lines are ignored. A line that is not JSON (torn, glued, garbage) is
    skipped and counted rather than stopping the rest of the file.
    """
    values, bad = read_json_lines_noting(path)
    return values, len(bad)


def read_json_lines_noting(path: Path) -> tuple[list[Any], list[dict[str, Any]]]:
    """Like :func:`read_json_lines`, but name each skipped line (1-based) and why."""
    values: list[Any] = []
    bad: list[dict[str, Any]] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.strip()
            if not line:
                continue
            try:
                values.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                torn = not raw.endswith(b"\n")
                reason = "cut mid-line at the end of the file" if torn else "not valid JSON"
                bad.append({"line": number, "reason": reason})
    return values, bad


def detect_format(path: Path) -> str:
    """Name the format of ``path``: ``"claude-code"``, ``"qwen-code"`` or ``"bundle"``.

    Raises :class:`ImportFormatError` (one clear line) for a file that is not JSON
    or not a transcript we know, and :class:`NotFoundError` for a missing file.
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"{path} does not exist")
    if path.is_dir():
        raise ImportFormatError(f"{path} is a directory; give the transcript file itself")
    with path.open("rb") as fh:
        head = fh.read(1024)
    if not head.strip():
        raise ImportFormatError(f"{path} is empty")
    if _is_archive(path, head):
        return "bundle"

    samples = _sniff_json(path)
    if not samples:
        raise ImportFormatError(f"{path} is not a transcript: it holds no JSON")
    for value in samples:
        fmt = _classify(value)
        if fmt:
            return fmt
    raise ImportFormatError(
        f"{path} is JSON but not a transcript format we know (expected Claude Code or Qwen Code)"
    )


def load(path: Path, fmt: str | None = None) -> ImportedSession:
    """Read the transcript at ``path`` (format detected unless ``fmt`` names it)."""
    path = Path(path)
    if fmt is None:
        fmt = detect_format(path)
    elif not path.exists():
        raise NotFoundError(f"{path} does not exist")
    # Why import here: the format modules import ImportedSession from this package.
    if fmt == "claude-code":
        from workhearth.sessions.importers.claude_code import load_claude_code

        return load_claude_code(path)
    if fmt == "qwen-code":
        from workhearth.sessions.importers.qwen_code import load_qwen_code

        return load_qwen_code(path)
    if fmt == "bundle":
        raise ImportFormatError(
            f"{path} is a workhearth bundle, not a transcript; import it as a bundle"
        )
    raise UsageError(f"unknown import format {fmt!r} (expected one of: claude-code, qwen-code)")


def _is_archive(path: Path, head: bytes) -> bool:
    """True for a zip, a tar, or a gzip/zstd-compressed tar (by magic, not by name)."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return True
    if _is_tar_header(head):
        return True
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as fh:
                return _is_tar_header(fh.read(512))
        except (OSError, EOFError, zlib.error):
            return False
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        try:
            import zstandard

            with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as fh:
                return _is_tar_header(fh.read(512))
        except (OSError, zstandard.ZstdError):
            return False
    return False


def _is_tar_header(block: bytes) -> bool:
    return len(block) >= 262 and block[257:262] == b"ustar"


def _sniff_json(path: Path) -> list[Any]:
    """A few parsed JSON values from the start of ``path`` (lines, or the whole document)."""
    values: list[Any] = []
    seen = 0
    with path.open("rb") as fh:
        for raw in fh:
            line = raw.strip()
            if not line:
                continue
            seen += 1
            try:
                values.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                pass
            if seen >= _SNIFF_LINES:
                break
    if values:
        return values
    # Why: a pretty-printed JSON document (Gemini CLI checkpoint) has no single-line values.
    try:
        return [orjson.loads(path.read_bytes())]
    except orjson.JSONDecodeError:
        return []


def _classify(value: Any) -> str | None:
    """The format one parsed JSON value belongs to, or None when it tells nothing."""
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and ("parts" in v or "type" in v) for v in value):
            return "qwen-code"  # Gemini CLI checkpoint: a list of Content or message records
        return None
    if not isinstance(value, dict):
        return None
    for matches, fmt in _RECORD_RULES:
        if matches(value):
            return fmt
    return None


def _has_gemini_parts(value: dict[str, Any]) -> bool:
    message = value.get("message")
    return isinstance(message, dict) and "parts" in message


def _has_qwen_fields(value: dict[str, Any]) -> bool:
    return "systemPayload" in value or (value.get("type") == "tool_result" and "uuid" in value)


def _has_claude_markers(value: dict[str, Any]) -> bool:
    return value.get("type") in _CLAUDE_ONLY_TYPES or "isSidechain" in value or "leafUuid" in value


def _is_claude_message(value: dict[str, Any]) -> bool:
    message = value.get("message")
    return isinstance(message, dict) and "content" in message and "uuid" in value


def _is_gemini_message(value: dict[str, Any]) -> bool:
    """A Gemini CLI message record."""
    return value.get("type") in ("user", "gemini") and "id" in value and "content" in value


def _is_gemini_conversation(value: dict[str, Any]) -> bool:
    """A Gemini CLI conversation object or its metadata line."""
    return isinstance(value.get("messages"), list) or "projectHash" in value


# Why this order: newer Qwen Code records also carry isSidechain, so Gemini-shaped
# content (``parts``) and Qwen-only fields are checked before Claude's markers.
_RECORD_RULES: tuple[tuple[Callable[[dict[str, Any]], bool], str], ...] = (
    (_has_gemini_parts, "qwen-code"),
    (_has_qwen_fields, "qwen-code"),
    (_has_claude_markers, "claude-code"),
    (_is_claude_message, "claude-code"),
    (_is_gemini_message, "qwen-code"),
    (_is_gemini_conversation, "qwen-code"),
)
