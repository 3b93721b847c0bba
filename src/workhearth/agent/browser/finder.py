"""Which browser the agent drives (issue 25): one found on the machine, never downloaded.

Order: ``[browser] executable`` (a path, or a name looked up on PATH), then a
Chromium-family browser on PATH (Chromium, Chrome, Edge), then the usual install
places of this platform, then a Chromium Playwright installed itself
(``playwright install chromium``). A configured executable that is missing is said
so, not quietly replaced: the user named that one.

The environment comes in as a mapping (PATH, HOME, LOCALAPPDATA,
``PLAYWRIGHT_BROWSERS_PATH``): library code reads no environment of its own.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workhearth.config import BrowserConfig
from workhearth.errors import ConfigError

ON_PATH = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
    "microsoft-edge-stable",
    "msedge",
)
_MAC_APPS = (
    "Google Chrome.app/Contents/MacOS/Google Chrome",
    "Chromium.app/Contents/MacOS/Chromium",
    "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
)
_WINDOWS = (
    "Google/Chrome/Application/chrome.exe",
    "Microsoft/Edge/Application/msedge.exe",
    "Chromium/Application/chrome.exe",
)
_LINUX = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/opt/google/chrome/chrome",
    "/opt/microsoft/msedge/msedge",
)
# Inside ms-playwright/chromium-<revision>/: the folder names Playwright has used.
_PLAYWRIGHT_BINARIES = (
    "chrome-linux64/chrome",
    "chrome-linux/chrome",
    "chrome-mac-arm64/Chromium.app/Contents/MacOS/Chromium",
    "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
    "chrome-win64/chrome.exe",
    "chrome-win/chrome.exe",
)
HOW_TO_GET = (
    "install Chromium, Google Chrome or Microsoft Edge (Debian/Ubuntu: apt-get install "
    "chromium), or set [browser] executable; or run `playwright install chromium`"
)
PACKAGE_HINT = "pip install 'workhearth[browser]'"


@dataclass(frozen=True)
class FoundBrowser:
    """A browser to launch, and how it was found (for ``hearth doctor``)."""

    path: Path
    how: str  # "[browser] executable", "on PATH", "installed", "Playwright's own"


def find_browser(
    config: BrowserConfig,
    env: Mapping[str, str],
    *,
    places: Sequence[Path] | None = None,
) -> FoundBrowser | None:
    """The browser to drive, or None (:func:`why_no_browser` says why and what to do).

    ``places``: the install places to look in (default: this platform's usual ones).
    """
    search_path = env.get("PATH", "")
    if config.executable is not None:
        path = _configured(config.executable, search_path, env)
        return FoundBrowser(path, "[browser] executable") if path else None
    for name in ON_PATH:
        where = shutil.which(name, path=search_path)
        if where:
            return FoundBrowser(Path(where), "on PATH")
    for place in _usual_places(env) if places is None else places:
        if _runnable(place):
            return FoundBrowser(place, "installed")
    own = playwright_chromium(env)
    return FoundBrowser(own, "Playwright's own") if own else None


def why_no_browser(config: BrowserConfig, env: Mapping[str, str]) -> str:
    """Words for the model and ``hearth doctor`` when :func:`find_browser` found none."""
    if config.executable is not None:
        return (
            f"[browser] executable {config.executable!r} is not a program that can run; "
            "fix the path or remove it to use a browser found on the machine"
        )
    return f"no Chromium-family browser was found: {HOW_TO_GET}"


def browser_status(config: BrowserConfig, env: Mapping[str, str]) -> dict[str, Any]:
    """``hearth doctor``'s browser report: which browser and how it was found (or how to
    get one), whether the Python package is installed, and the ``line`` it prints."""
    found = find_browser(config, env)
    package = importlib.util.find_spec("playwright") is not None
    if found is None:
        line = why_no_browser(config, env)
        line = line if package else f"{line}; and {PACKAGE_HINT}"
    elif not package:
        line = f"{found.path} ({found.how}), but the Python package playwright is missing: "
        line += PACKAGE_HINT
    else:
        line = f"{found.path} ({found.how}), " + ("headless" if config.headless else "on screen")
    problem = _allow_problem(config)
    if problem:
        line = f"{line}; {problem} (runs stop before they start)"
    return {
        "path": str(found.path) if found else None,
        "found_by": found.how if found else None,
        "package": package,
        "allow_problem": problem,
        "line": line,
    }


def _allow_problem(config: BrowserConfig) -> str | None:
    """The first ``[browser] allow`` entry that cannot be read, in words; None when all can."""
    from workhearth.agent.browser.allow import parse_allow

    try:
        parse_allow(config.allow)
    except ConfigError as exc:
        return exc.message
    return None


def _configured(value: str, search_path: str, env: Mapping[str, str]) -> Path | None:
    if "/" not in value and "\\" not in value:
        where = shutil.which(value, path=search_path)
        return Path(where) if where else None
    path = Path(_expand_home(value, env))
    return path if _runnable(path) else None


def _expand_home(value: str, env: Mapping[str, str]) -> str:
    home = env.get("HOME") or env.get("USERPROFILE")
    if home and (value == "~" or value.startswith(("~/", "~\\"))):
        return home + value[1:]
    return value


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _usual_places(env: Mapping[str, str]) -> list[Path]:
    if sys.platform == "darwin":
        roots = [Path("/Applications")]
        if env.get("HOME"):
            roots.append(Path(env["HOME"]) / "Applications")
        return [root / app for root in roots for app in _MAC_APPS]
    if sys.platform == "win32":
        keys = ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")
        roots = [Path(env[k]) for k in keys if env.get(k)]
        return [root / exe for root in roots for exe in _WINDOWS]
    return [Path(p) for p in _LINUX]


def playwright_chromium(env: Mapping[str, str]) -> Path | None:
    """The newest Chromium ``playwright install`` put in its cache, or None."""
    cache = _playwright_cache(env)
    if cache is None or not cache.is_dir():
        return None
    revisions = sorted(
        (d for d in cache.glob("chromium-*") if re.fullmatch(r"chromium-\d+", d.name)),
        key=lambda d: int(d.name.split("-")[1]),
        reverse=True,
    )
    for folder in revisions:
        for binary in _PLAYWRIGHT_BINARIES:
            if _runnable(folder / binary):
                return folder / binary
    return None


def _playwright_cache(env: Mapping[str, str]) -> Path | None:
    """Where Playwright keeps its browsers (its own rule: the variable, else per platform)."""
    chosen = env.get("PLAYWRIGHT_BROWSERS_PATH")
    if chosen and chosen != "0":
        return Path(_expand_home(chosen, env))
    if chosen == "0":  # inside the installed package
        spec = importlib.util.find_spec("playwright")
        origin = spec.origin if spec else None
        return Path(origin).parent / "driver/package/.local-browsers" if origin else None
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA")
        return Path(local) / "ms-playwright" if local else None
    home = env.get("HOME")
    if sys.platform == "darwin":
        return Path(home) / "Library/Caches/ms-playwright" if home else None
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "ms-playwright"
    return Path(home) / ".cache/ms-playwright" if home else None
