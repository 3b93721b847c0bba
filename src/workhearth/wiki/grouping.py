"""Which page a source belongs to, and what the page is called.

The rule, kept simple so a user can predict it: **one page per folder that directly holds
a source** (its files, not its subfolders' files — each subfolder has its own page), plus
the overview. A code package, a folder of reports and a module's tests each get a page;
the top-level files get the page ``top-level``.

A page's name is its folder path in lowercase with every run of other characters turned
into one dash (``src/workhearth/memory`` → ``src-workhearth-memory``, ``Docs/Q3 Reports`` →
``docs-q3-reports``), at most 80 characters. When that would be empty (a folder named in
Chinese), too long, a reserved name (``overview``; ``search``, which ``GET /v1/wiki/search``
answers), or shared by two folders (``a-b`` and ``a/b``), every
folder concerned gets its slug cut to 71 characters plus ``-`` and 8 hex digits of its
path's hash: stable for that folder whatever else changes.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

from workhearth.wiki.pages import OVERVIEW

TOP_LEVEL = "top-level"
# Why "search": ``GET /v1/wiki/search`` is the search, so a page of that name could not be read.
RESERVED = frozenset({OVERVIEW, "search"})
MAX_NAME = 80
_OTHER = re.compile(r"[^a-z0-9]+")


def slug(folder: str) -> str:
    if folder == ".":
        return TOP_LEVEL
    return _OTHER.sub("-", folder.lower()).strip("-")


def _hashed(folder: str) -> str:
    digest = hashlib.sha256(folder.encode("utf-8")).hexdigest()[:8]
    base = slug(folder)[: MAX_NAME - 9].rstrip("-")
    return f"{base}-{digest}" if base else f"folder-{digest}"


def page_names(folders: Iterable[str]) -> dict[str, str]:
    """``folder -> page name`` for every folder, names unique and never a reserved one."""
    by_slug: dict[str, list[str]] = defaultdict(list)
    for folder in sorted(set(folders)):
        by_slug[slug(folder)].append(folder)
    names: dict[str, str] = {}
    for base, group in by_slug.items():
        plain = len(group) == 1 and base and base not in RESERVED and len(base) <= MAX_NAME
        for folder in group:
            names[folder] = base if plain else _hashed(folder)
    return names


def title_of(folder: str) -> str:
    """A page's title: its folder (``.`` reads as "top level")."""
    return "top level" if folder == "." else folder
