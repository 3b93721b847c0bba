"""Which browser the agent drives (agent/browser/finder.py): real files, a real PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.agent.browser.finder import (
    FoundBrowser,
    browser_status,
    find_browser,
    playwright_chromium,
    why_no_browser,
)
from workhearth.config import BrowserConfig

CHROMIUM = Path("/usr/bin/chromium")


def program(path: Path, runnable: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755 if runnable else 0o644)
    return path


def test_the_configured_executable_comes_first(tmp_path: Path) -> None:
    mine = program(tmp_path / "opt" / "my-chrome")
    bin_ = tmp_path / "bin"
    program(bin_ / "chromium")
    found = find_browser(BrowserConfig(executable=str(mine)), {"PATH": str(bin_)})
    assert found == FoundBrowser(mine, "[browser] executable")


def test_a_configured_name_is_looked_up_on_path_and_a_tilde_is_home(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    named = program(bin_ / "brave-browser")
    found = find_browser(BrowserConfig(executable="brave-browser"), {"PATH": str(bin_)})
    assert found is not None and found.path == named
    at_home = program(tmp_path / "apps" / "chrome")
    env = {"PATH": "", "HOME": str(tmp_path)}
    found = find_browser(BrowserConfig(executable="~/apps/chrome"), env)
    assert found is not None and found.path == at_home


@pytest.mark.parametrize("runnable", [False, None])
def test_a_configured_executable_that_cannot_run_is_said_not_replaced(
    tmp_path: Path, runnable: bool | None
) -> None:
    target = tmp_path / "chrome"
    if runnable is not None:
        program(target, runnable)
    bin_ = tmp_path / "bin"
    program(bin_ / "chromium")  # would be found if the configured one were quietly replaced
    config = BrowserConfig(executable=str(target))
    assert find_browser(config, {"PATH": str(bin_)}, places=[]) is None
    words = why_no_browser(config, {})
    assert f"[browser] executable {str(target)!r} is not a program that can run" in words


def test_path_is_searched_in_order_chromium_before_chrome(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    program(bin_ / "google-chrome")
    chromium = program(bin_ / "chromium")
    assert find_browser(BrowserConfig(), {"PATH": str(bin_)}) == FoundBrowser(chromium, "on PATH")
    program(bin_ / "chromium", runnable=False).unlink()
    found = find_browser(BrowserConfig(), {"PATH": str(bin_)})
    assert found == FoundBrowser(bin_ / "google-chrome", "on PATH")


def test_then_the_usual_places(tmp_path: Path) -> None:
    edge = program(tmp_path / "opt" / "msedge")
    places = [tmp_path / "missing" / "chrome", program(tmp_path / "x", runnable=False), edge]
    found = find_browser(BrowserConfig(), {"PATH": ""}, places=places)
    assert found == FoundBrowser(edge, "installed")


def test_then_playwrights_own_newest_chromium(tmp_path: Path) -> None:
    cache = tmp_path / "pw"
    program(cache / "chromium-1100" / "chrome-linux" / "chrome")
    newest = program(cache / "chromium-1200" / "chrome-linux64" / "chrome")
    program(cache / "chromium_headless_shell-1300" / "chrome-linux" / "headless_shell")
    env = {"PATH": "", "PLAYWRIGHT_BROWSERS_PATH": str(cache)}
    assert find_browser(BrowserConfig(), env, places=[]) == FoundBrowser(newest, "Playwright's own")


def test_playwrights_cache_is_under_the_users_cache_folder(tmp_path: Path) -> None:
    in_xdg = program(tmp_path / "xdg" / "ms-playwright" / "chromium-9" / "chrome-linux" / "chrome")
    assert playwright_chromium({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) == in_xdg
    home = tmp_path / "home"
    at_home = program(home / ".cache" / "ms-playwright" / "chromium-7" / "chrome-linux" / "chrome")
    assert playwright_chromium({"HOME": str(home)}) == at_home
    assert playwright_chromium({}) is None


def test_nothing_found_says_how_to_get_one(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    assert find_browser(BrowserConfig(), env, places=[]) is None
    words = why_no_browser(BrowserConfig(), env)
    assert "no Chromium-family browser was found" in words
    assert "apt-get install chromium" in words and "playwright install chromium" in words


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_debians_chromium_is_found_on_the_real_path() -> None:
    assert find_browser(BrowserConfig(), {"PATH": "/usr/local/bin:/usr/bin:/bin"}) == (
        FoundBrowser(CHROMIUM, "on PATH")
    )


def test_the_doctor_status_names_the_browser_and_how_it_shows(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    mine = program(tmp_path / "chrome")
    status = browser_status(BrowserConfig(executable=str(mine), headless=False), {})
    assert status == {
        "path": str(mine),
        "found_by": "[browser] executable",
        "package": True,
        "allow_problem": None,
        "line": f"{mine} ([browser] executable), on screen",
    }
