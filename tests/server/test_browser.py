"""The web workbench in real headless Chromium (Debian's, driven by Playwright), against
the real ``hearth serve`` command in a temporary HEARTH_HOME.

Each test logs in through the URL the server prints and saves a screenshot under
``$TMPDIR/workhearth-test-artifacts/``. The memory undo timings are the page's own
(``UNDO_MS`` 5 s, toast gone at 4 s): the tests wait on what the page shows.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import HEARTH_CMD

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(tempfile.gettempdir()) / "workhearth-test-artifacts"
WEB = Path(__file__).parents[2] / "src" / "workhearth" / "server" / "web"
LOGIN_LINE = re.compile(r"^http://127\.0\.0\.1:(\d+)/login\?token=\S+$")
_SCRUBBED = ("OPENAI_", "ANTHROPIC_", "HEARTH_")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")


@dataclass
class Workbench:
    """One ``hearth serve`` process; ``api`` talks to it with the bearer token."""

    base: str
    login_url: str
    home: Path
    workspace: Path
    proc: subprocess.Popen[str]
    api: httpx.Client
    lines: list[str] = field(default_factory=list)

    def memory(self) -> list[dict[str, Any]]:
        answer = self.api.get("/v1/memory", params={"limit": 100})
        assert answer.status_code == 200, answer.text
        return list(answer.json()["entries"])

    def save(self, content: str, **body: Any) -> dict[str, Any]:
        answer = self.api.post("/v1/memory", json={"content": content, **body})
        assert answer.status_code == 201, answer.text
        return dict(answer.json())


def start_serve(root: Path, env_extra: dict[str, str] | None = None, *, port: int = 0) -> Workbench:
    home, workspace = root / "home", root / "workspace"
    home.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    if not config.exists():
        # Why: a page bug that calls the fake model once too often fails fast.
        config.write_text("[models]\nmax_retries = 0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED)}
    env |= {"HEARTH_HOME": str(home), **(env_extra or {})}
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", str(port), "--no-open"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, f"no login URL printed: {seen}"
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            assert proc.poll() is None, f"hearth serve exited: {seen}"
            continue
        seen.append(line)
        if match := LOGIN_LINE.match(line):
            break
    base = f"http://127.0.0.1:{match.group(1)}"
    token = (home / "server.token").read_text().strip()
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=20)
    return Workbench(base, line, home, workspace, proc, api, seen)


def stop_serve(bench: Workbench) -> None:
    bench.api.close()
    bench.proc.terminate()
    try:
        bench.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        bench.proc.kill()
        bench.proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    served = start_serve(tmp_path)
    yield served
    stop_serve(served)


@pytest.fixture
def open_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``open_page(bench, locale=…, viewport=…, color_scheme=…)`` -> a logged-in page; a
    screenshot is saved at the end, and a script error in the page fails the test."""
    contexts: list[Any] = []
    pages: list[Any] = []
    errors: list[str] = []

    def make(
        served: Workbench,
        locale: str = "en-US",
        login: bool = True,
        viewport: dict[str, int] | None = None,
        color_scheme: str = "light",
    ) -> Any:
        context = browser.new_context(
            viewport=viewport or {"width": 1280, "height": 860},
            locale=locale,
            color_scheme=color_scheme,
        )
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.base)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        if login:
            page.goto(served.login_url)
            page.wait_for_url(f"{served.base}/")
        pages.append(page)
        return page

    yield make
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for i, page in enumerate(p for p in pages if not p.is_closed()):
        suffix = f"-{i}" if i else ""
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}{suffix}.png"), full_page=True)
    for context in contexts:
        context.close()
    assert not errors, f"script errors in the page: {errors}"


def row(page: Any, text: str) -> Any:
    return page.locator("#memory-list li.memory-row", has_text=text)


def wait_until(what: str, check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# ----------------------------------------------------------------------- login
def test_login_via_the_printed_url_sets_an_httponly_cookie_and_drops_the_token(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    page = open_page(bench, login=False)
    page.goto(f"{bench.base}/#/memory")
    expect = sync_api.expect
    # A stranger sees the sign-in page only, never the workbench.
    expect(page.locator("#signin")).to_be_visible()
    assert page.locator(".nav").count() == 0

    page.goto(bench.login_url)
    page.wait_for_url(f"{bench.base}/")
    assert "token" not in page.url
    (cookie,) = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    token = (bench.home / "server.token").read_text().strip()
    assert token not in page.content()
    assert page.evaluate("document.cookie") == ""  # the page's scripts cannot read it
    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#signin")).to_have_count(0)
    expect(page.locator("#memory-search")).to_be_visible()
    # The one-time URL does not work twice.
    again = httpx.get(bench.login_url, follow_redirects=False)
    assert again.status_code != 303


# ----------------------------------------------------------------------- memory
def test_add_search_edit_a_memory_and_a_markdown_edit_shows_on_refresh(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#memory-summary")).to_have_text(re.compile("Nothing remembered"))

    page.get_by_role("button", name="New memory").click()
    page.get_by_label("What should be remembered?").fill("The release train leaves on Thursdays")
    page.get_by_label("Tags").fill("release, team")
    page.keyboard.press("Control+Enter")
    expect(row(page, "release train")).to_be_visible()
    (saved,) = bench.memory()
    assert saved["content"] == "The release train leaves on Thursdays"
    assert saved["tags"] == ["release", "team"]

    bench.save("Staging deploys need the VPN")
    page.get_by_role("button", name="Refresh").click()
    expect(page.locator("#memory-list li")).to_have_count(2)
    expect(page.locator("#memory-list li").first).to_contain_text("VPN")  # newest first

    page.locator("#memory-search").fill("Thursdays")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-summary")).to_have_text("1 match")
    page.locator("#memory-list li").get_by_role("button", name=re.compile("^Edit")).click()
    editor = page.get_by_label("Edit memory")
    expect(editor).to_be_focused()
    expect(editor).to_have_value("The release train leaves on Thursdays")
    editor.fill("The release train leaves on Fridays")
    page.keyboard.press("Control+Enter")
    expect(row(page, "Fridays")).to_be_visible()
    assert {e["content"] for e in bench.memory()} == {
        "The release train leaves on Fridays",
        "Staging deploys need the VPN",
    }
    page.locator("#memory-search").press("Escape")
    expect(page.locator("#memory-list li")).to_have_count(2)

    # Someone edits the Markdown in an editor; Refresh shows it.
    (md,) = [p for p in bench.home.rglob("MEMORY.md") if "VPN" in p.read_text()]
    md.write_text(md.read_text().replace("need the VPN", "need the office VPN"))
    page.get_by_role("button", name="Refresh").click()
    expect(row(page, "need the office VPN")).to_be_visible()

    page.get_by_role("button", name=re.compile("^Copy prompt: Staging")).click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.endswith("Staging deploys need the office VPN")


def test_delete_then_undo_keeps_the_entry_and_focus_returns_to_the_toolbar(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench.save("Keep me, I was deleted by mistake")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    target = row(page, "Keep me")
    target.get_by_role("button", name=re.compile("^Delete")).click()
    expect(target).to_have_count(0)  # hidden at once
    expect(page.locator("#memory-search")).to_be_focused()
    page.get_by_role("button", name="Undo").click()
    expect(row(page, "Keep me")).to_be_visible()
    expect(page.locator("#memory-search")).to_be_focused()
    page.wait_for_timeout(6500)  # past the delete timer
    assert [e["content"] for e in bench.memory()] == ["Keep me, I was deleted by mistake"]
    page.get_by_role("button", name="Refresh").click()
    expect(row(page, "Keep me")).to_be_visible()


def test_delete_commits_after_the_toast_is_gone_and_a_refresh_never_brings_it_back(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench.save("An outdated fact about the build")
    bench.save("A fact that stays")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    row(page, "outdated").get_by_role("button", name=re.compile("^Delete")).click()
    toast = page.locator(".toast", has_text="Memory deleted")
    expect(toast).to_be_visible()
    # A background refresh during the undo window keeps the pending row hidden.
    page.get_by_role("button", name="Refresh").click()
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(toast).to_be_hidden(timeout=6000)
    # The toast went first: the entry is still on the server when it disappears.
    assert len(bench.memory()) == 2
    wait_until("the delete to commit", lambda: len(bench.memory()) == 1, timeout=10)
    assert [e["content"] for e in bench.memory()] == ["A fact that stays"]
    page.get_by_role("button", name="Refresh").click()
    expect(page.locator("#memory-list li")).to_have_count(1)


def test_leaving_the_page_during_the_undo_window_commits_the_delete(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    bench.save("Delete me on the way out")
    bench.save("Leave me alone")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    row(page, "on the way out").get_by_role("button", name=re.compile("^Delete")).click()
    sync_api.expect(row(page, "on the way out")).to_have_count(0)
    left = time.monotonic()
    page.goto("about:blank")  # pagehide: the keepalive DELETE goes now
    wait_until("the keepalive delete", lambda: len(bench.memory()) == 1, timeout=10)
    # Why: well before the 5 s timer, which died with the page anyway.
    assert time.monotonic() - left < 4.5
    assert [e["content"] for e in bench.memory()] == ["Leave me alone"]
    page.goto(f"{bench.base}/#/memory")
    sync_api.expect(page.locator("#memory-list li")).to_have_count(1)


def test_xss_content_is_shown_as_text(bench: Workbench, open_page: Callable[..., Any]) -> None:
    payload = (
        "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
    )
    bench.save(payload, level="critical", tags=["xss"])
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    content = page.locator("#memory-list .memory-content")
    sync_api.expect(content).to_have_text(payload)
    assert page.locator("#memory-list img, #memory-list script").count() == 0
    page.locator("#memory-search").fill("onerror")
    sync_api.expect(page.locator("#memory-summary")).to_have_text("1 match")
    assert page.locator("#memory-list img").count() == 0
    assert page.title() != "pwned"


def test_language_follows_the_browser_and_the_switch_is_remembered(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    page = open_page(bench, locale="zh-CN")
    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#view-title")).to_have_text("记忆")
    expect(page.get_by_role("button", name="新建记忆")).to_be_visible()
    page.get_by_label("语言").select_option("en")
    expect(page.locator("#view-title")).to_have_text("Memory")
    page.reload()
    expect(page.get_by_role("button", name="New memory")).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == "en"


def test_keyboard_only_add_and_escape(bench: Workbench, open_page: Callable[..., Any]) -> None:
    expect = sync_api.expect
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#memory-search")).to_be_visible()
    page.locator("#memory-search").focus()
    page.keyboard.press("Tab")
    expect(page.locator("#memory-add")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#memory-new textarea")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#memory-new")).to_be_hidden()
    expect(page.locator("#memory-add")).to_be_focused()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


# ----------------------------------------------------------------------- page rules
def test_the_page_has_no_inline_script_and_never_parses_content_as_html(bench: Workbench) -> None:
    answer = bench.api.get("/")
    csp = answer.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp
    for page in ("index.html", "page.html"):  # the workbench; sign-in and error pages
        html = (WEB / page).read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", html)
        assert not re.search(r"\son[a-z]+\s*=", html)
        assert "http://" not in html and "https://" not in html  # no CDN
    for js in WEB.glob("*.js"):
        source = js.read_text()
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function"):
            assert banned not in source, f"{js.name} uses {banned}"
    for name in ("app.js", "app.css", "i18n.js", "memory.js", "favicon.svg"):
        assert bench.api.get(f"/{name}").status_code == 200


def test_english_and_chinese_have_the_same_strings(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    page = open_page(bench)
    keys = page.evaluate("import('/i18n.js').then(m => m.KEYS)")
    assert keys["en"] and sorted(keys["en"]) == sorted(keys["zh"])
    used = set()
    for js in WEB.glob("*.js"):
        used |= set(re.findall(r"""\bt\("([a-zA-Z.]+)\"""", js.read_text()))
    assert used - set(keys["en"]) == set()
