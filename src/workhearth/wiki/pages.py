"""A wiki page on disk: Markdown with a YAML front matter block (the spec's file format).

```
---
title: "src/workhearth/memory"
written: 2026-12-02T09:30:00Z
model: "openai:qwen-plus"
sources:
  - {path: "src/workhearth/memory/api.py", sha256: 3f2a…}
unreadable:
  - {path: "data/broken.pdf", reason: "not a PDF (no %PDF header)"}
links: [src-workhearth-memory]          # the overview only
body_sha256: 5d41…
---
# src/workhearth/memory
…
```
``body_sha256`` is the hash of everything after the closing ``---`` line as hearth wrote
it: when the file's body hashes otherwise, the user edited the page, and hearth never
overwrites it (the update goes beside it as ``<name>.update.md``). Strings are written as
JSON strings, which YAML reads as the same double-quoted scalars, so any path is safe.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from workhearth.errors import NotFoundError

OVERVIEW = "overview"
UPDATE_SUFFIX = ".update.md"
PAGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
_FENCE = "---\n"

try:  # Why: the C loader reads a page's front matter ~10x faster (a 2,000-file update)
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class PageInfo:
    """One page as listed (the spec's fields; ``as_dict`` is what ``--json`` and REST show)."""

    name: str
    title: str
    written: str
    model: str
    sources: list[dict[str, str]] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    edited: bool = False
    update_waiting: bool = False
    stale: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "written": self.written,
            "model": self.model,
            "sources": [dict(s) for s in self.sources],
            "unreadable": [dict(u) for u in self.unreadable],
            "edited": self.edited,
            "update_waiting": self.update_waiting,
            "stale": self.stale,
        }


@dataclass
class WikiPage(PageInfo):
    """A page with its body (the Markdown below the front matter)."""

    text: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "text": self.text}


@dataclass
class PageFile:
    """What a page file holds, parsed: its front matter fields and its body."""

    name: str
    meta: dict[str, Any]
    body: str
    head: str = ""  # the front matter's text, as on disk

    @property
    def version(self) -> str:
        """Which writing of the page this is: the hash of the front matter hearth wrote
        (its time, sources and body hash), unchanged by a hand edit of the body."""
        return sha256_text(self.head) if self.head else ""

    @property
    def sources(self) -> dict[str, str | None]:
        """``path -> sha256`` of every source the page was written from (None: unreadable
        bytes), unreadable ones included, so a source that appears or vanishes shows."""
        out: dict[str, str | None] = {}
        for item in self.meta.get("unreadable") or []:
            if isinstance(item, dict) and item.get("path"):
                out[str(item["path"])] = None
        for item in self.meta.get("sources") or []:
            if isinstance(item, dict) and item.get("path"):
                out[str(item["path"])] = str(item.get("sha256") or "") or None
        return out

    @property
    def links(self) -> list[str]:
        return [str(x) for x in self.meta.get("links") or []]

    @property
    def written_body_sha(self) -> str:
        return str(self.meta.get("body_sha256") or "")

    @property
    def edited(self) -> bool:
        return sha256_text(self.body) != self.written_body_sha

    def info(self, *, update_waiting: bool, stale: bool) -> PageInfo:
        return PageInfo(
            name=self.name,
            title=str(self.meta.get("title") or self.name),
            written=_iso(self.meta.get("written")),
            model=str(self.meta.get("model") or ""),
            sources=_pairs(self.meta.get("sources"), "sha256"),
            unreadable=_pairs(self.meta.get("unreadable"), "reason"),
            edited=self.edited,
            update_waiting=update_waiting,
            stale=stale,
        )


def _iso(value: Any) -> str:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return "" if value is None else str(value)


def _pairs(items: Any, second: str) -> list[dict[str, str]]:
    return [
        {"path": str(item["path"]), second: str(item.get(second) or "")}
        for item in items or []
        if isinstance(item, dict) and item.get("path")
    ]


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render(
    *,
    title: str,
    model: str,
    sources: list[tuple[str, str]],
    unreadable: list[tuple[str, str]],
    body: str,
    links: list[str] | None = None,
    written: str | None = None,
) -> str:
    """The page file's text: front matter (with the body's hash) and ``body``."""
    q = _quote
    lines = [
        "---",
        f"title: {q(title)}",
        f"written: {written or now_iso()}",
        f"model: {q(model)}",
        "sources:" + ("" if sources else " []"),
        *(f"  - {{path: {q(p)}, sha256: {sha}}}" for p, sha in sources),
        "unreadable:" + ("" if unreadable else " []"),
        *(f"  - {{path: {q(p)}, reason: {q(why)}}}" for p, why in unreadable),
    ]
    if links is not None:
        lines.append(f"links: [{', '.join(links)}]")
    lines += [f"body_sha256: {sha256_text(body)}", "---", ""]
    return "\n".join(lines) + body


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse(name: str, text: str) -> PageFile:
    """A page file's front matter and body; a file without front matter is all body
    (a page the user wrote or mangled: it counts as edited, so hearth never replaces it)."""
    if text.startswith(_FENCE):
        end = text.find("\n" + _FENCE, len(_FENCE) - 1)
        if end != -1:
            head = text[len(_FENCE) : end + 1]
            try:
                meta = yaml.load(head, Loader=_Loader)  # a safe loader (CSafeLoader)
            except yaml.YAMLError:
                meta = None
            if isinstance(meta, dict):
                return PageFile(name, meta, text[end + 1 + len(_FENCE) :], head)
    return PageFile(name, {}, text)


def page_path(folder: Path, name: str) -> Path:
    return folder / f"{name}.md"


def update_path(folder: Path, name: str) -> Path:
    return folder / f"{name}{UPDATE_SUFFIX}"


def load(folder: Path, name: str) -> PageFile | None:
    """The page ``name`` in ``folder``, or None when there is none."""
    try:
        raw = page_path(folder, name).read_bytes()
    except FileNotFoundError:
        return None
    return parse(name, raw.decode("utf-8", "replace"))


def page_names(folder: Path) -> list[str]:
    """Every page in ``folder`` (not updates, not hidden files), the overview first."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    names = sorted(
        p.name[:-3]
        for p in entries
        if p.name.endswith(".md")
        and not p.name.endswith(UPDATE_SUFFIX)
        and PAGE_NAME.fullmatch(p.name[:-3])
    )
    return sorted(names, key=lambda n: n != OVERVIEW)


def check_name(name: str) -> str:
    """``name`` when it can name a page; NotFoundError in words otherwise."""
    if not PAGE_NAME.fullmatch(name):
        raise NotFoundError(
            "no wiki page by that name (page names are lowercase letters, digits and dashes)",
            code="wiki_no_page",
        )
    return name
