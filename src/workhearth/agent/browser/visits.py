"""The sites the user let the browser visit in one session, kept across a resume (issue 25).

Why kept: a first visit to each site asks the user once per session, and a resumed task is
the same session; without the list on disk a resume asks again, or, with nobody to ask,
stops ``not-asked`` at a site the user already allowed. Only sites the user said yes to
go in (the policy's :meth:`~.policy.SitePolicy.remember`): never a site the user said no
to, nor an ``allow``-listed one (those never ask), nor one a quest visited.

Where: ``browser-sites.json`` in the session folder, beside the tabs a resume reopens,
written whole and atomically on each new site. Not kept for an encrypted session: the
list is a browsing history in plain text, and an encrypted session keeps nothing in
plain text at rest (its browser profile is not kept either); a resume of one asks again.
A missing or damaged file is an empty list: the cost is a question, never a wider door.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from workhearth.agent.browser.urls import site_of
from workhearth.errors import UsageError
from workhearth.fsutil import atomic_write

if TYPE_CHECKING:
    from workhearth.sessions.session import Session

SITES = "browser-sites.json"


class Visits:
    """The sites a session's user let the browser visit; kept in ``file`` when it is set."""

    def __init__(self, file: Path | None = None, sites: set[str] | None = None) -> None:
        self.file = file
        self._sites = set(sites or ())
        self._lock = threading.Lock()

    @classmethod
    def of_session(cls, session: Session) -> Visits:
        """The sites ``session`` already allowed, kept in its folder from now on (not for an
        encrypted session: see the module's docstring)."""
        if session.encrypted:
            return cls()
        file = session.folder / SITES
        return cls(file, _read(file))

    def __contains__(self, site: object) -> bool:
        with self._lock:
            return site in self._sites

    def add(self, site: str) -> None:
        """Remember ``site``; a new one is written to ``file`` before this returns."""
        with self._lock:
            if site in self._sites:
                return
            self._sites.add(site)
            if self.file is None:
                return
            # Why not raised: the user's yes stands for this run either way; a list that
            # could not be written costs the same question again after a resume.
            with contextlib.suppress(OSError):
                atomic_write(self.file, orjson.dumps(sorted(self._sites)))


def _read(file: Path) -> set[str]:
    try:
        found = orjson.loads(file.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return set()
    if not isinstance(found, list):
        return set()
    return {site for site in found if isinstance(site, str) and _is_site(site)}


def _is_site(text: str) -> bool:
    """Whether ``text`` is a site as the policy writes one (``scheme://host[:port]``)."""
    try:
        return site_of(text) == text and text != "about:blank"
    except UsageError:
        return False
