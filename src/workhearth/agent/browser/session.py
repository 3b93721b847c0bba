"""The browser of one agent session (issue 25): launched at its first use, ended at once.

Why a thread of its own: Playwright's sync API belongs to the thread that started
it, while the agent loop runs read-only calls on a pool and a stop arrives from
another thread. Every Playwright call therefore goes through :meth:`BrowserSession.do`,
which runs it on the browser's one thread; :meth:`kill` needs no Playwright at all
(it signals the browser's process group), so a stop never waits for a slow page.

No browser outlives a SIGKILL of hearth: Playwright's driver is hearth's child
and reads its commands from hearth's pipe; when hearth dies the pipe closes, the
driver exits and kills the browser's process group (Playwright starts the browser
in a group of its own). ``tests/agent/browser/test_lifetime.py`` checks it, and a
browser a dead run left behind anyway is ended by the next launch on the same
profile (:func:`end_browsers_of`), before Chromium would refuse its locked profile.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import orjson

from workhearth.agent.approval import Mode
from workhearth.agent.browser.finder import find_browser
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.browser.proxy import CheckingProxy, Refusal, chromium_args
from workhearth.agent.browser.urls import site_of
from workhearth.agent.browser.visits import Visits
from workhearth.errors import HearthError

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright, Request, Route

    from workhearth.config import BrowserConfig
    from workhearth.sessions.session import Session

T = TypeVar("T")

PROFILE = "browser-profile"
TABS = "browser-tabs.json"  # the tabs open when the browser last closed (resume reopens them)
# Why each: a test (or a quiet user) browser reaches nothing but the pages it is sent to.
QUIET_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
)
DEFAULT_TIMEOUT = 20.0
# Counts what may open a tab (window.open, a link with a target), so an action waits for
# a new tab only when the page asked for one (Playwright announces it a little later).
_OPENS_JS = """(() => {
  if (window.__hearthOpens !== undefined) return;
  window.__hearthOpens = 0;
  const open = window.open;
  window.open = function (...args) { window.__hearthOpens += 1; return open.apply(this, args); };
  document.addEventListener("click", (event) => {
    const link = event.target && event.target.closest && event.target.closest("a[target]");
    if (link && !["_self", "_parent", "_top", ""].includes(link.target)) window.__hearthOpens += 1;
  }, true);
})();"""
_TAKE_OPENS_JS = (
    "() => { const n = window.__hearthOpens || 0; window.__hearthOpens = 0; return n; }"
)
POPUP_SECONDS = 2.0
_SNAPSHOT_JS = resources.files(__package__).joinpath("snapshot.js").read_text(encoding="utf-8")
_live: dict[str, BrowserSession] = {}  # the running browser of each session id
_live_lock = threading.Lock()


class BrowserError(HearthError):
    """The browser could not do what was asked; the words tell the model what to do next."""


class BrowserSession:
    """One session's browser: its tabs, the refs of its snapshots and its process.

    ``policy`` (:class:`SitePolicy`) sees every request before it goes out: a page a
    tab is about to load (a link, a form, a popup) must pass ``check_url`` (a site not
    yet visited is refused with words that say to open it with ``browser_open``, which
    asks), the page's own parts ``check_resource``; the navigations refused since the
    last action are in :attr:`blocked`. Underneath, every request (a redirect's too, which
    the route never sees) goes through a :class:`CheckingProxy` started and stopped with
    the browser; what it refused joins the blocked words. Why keep the route: it holds
    the mode's rules (first visits, quest's allow list) for the navigations a page starts,
    which a proxy cannot tell from a page's parts inside a TLS tunnel. ``keep_profile=False`` (an encrypted session)
    removes the profile folder when the browser closes.
    """

    def __init__(
        self,
        executable: Path,
        profile: Path,
        *,
        headless: bool = True,
        env: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT,
        keep_profile: bool = True,
    ) -> None:
        self.executable = executable
        self.profile = profile
        self.headless = headless
        self.env = dict(env) if env is not None else None
        self.extra_args = tuple(extra_args)
        self.timeout = timeout
        self.keep_profile = keep_profile
        # Why a switch: a picture after each action costs ~30 ms of the browser's time
        # (taken off the action's path, agent/browser/view.py; still worth saving).
        self.screenshots = True
        # Why: a profile of the user's own ([browser] profile) may be in use by the user's
        # browser; only the processes this session launched on it are ever ended.
        self.ours = True
        self._pids: list[int] = []
        self.policy: SitePolicy | None = None
        self.blocked: list[str] = []
        self.opened: list[Page] = []  # tabs the pages opened since the last action
        self.next_ref = 1
        self.session_id = ""  # the agent session it serves (a stop finds it by this id)
        # Where the open tabs are kept for a resume (None: not kept, e.g. encrypted sessions).
        self.tabs_file: Path | None = None
        self.notes: list[str] = []  # what the launch did that the next result should say
        self._urls: list[str] = []
        self._pw: Playwright | None = None
        self._context: BrowserContext | None = None
        self._proxy: CheckingProxy | None = None  # every request goes through it (proxy.py)
        self._asked: set[str] = set()  # URLs and sites pages requested since the last action
        self._landed: set[str] = set()  # sites a tab was found on and the policy allowed
        self._held: list[Refusal] = []  # refusals no page request was seen asking for yet
        self._current: Page | None = None
        self._closed = False
        self._stopped = False  # a kill came (checked when a launch ends)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_session(
        cls,
        session: Session,
        executable: Path,
        *,
        headless: bool = True,
        env: Mapping[str, str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> BrowserSession:
        """The browser of ``session``: its profile in the session folder, so a login made in
        a task survives a resume; an encrypted session's profile lives in a private temp
        folder for the run only (a profile is not sealed at rest: it is not kept)."""
        if session.encrypted:
            profile = Path(tempfile.mkdtemp(prefix="hearth-browser-"))
            return cls(
                executable,
                profile,
                headless=headless,
                env=env,
                extra_args=extra_args,
                keep_profile=False,
            )
        profile = session.folder / PROFILE
        browser = cls(executable, profile, headless=headless, env=env, extra_args=extra_args)
        browser.tabs_file = session.folder / TABS
        return browser

    @classmethod
    def for_run(
        cls,
        config: BrowserConfig,
        session: Session,
        mode: Mode,
        *,
        quest_network: bool,
        env: Mapping[str, str],
        home: Path,
    ) -> BrowserSession | None:
        """The browser of a run (not started yet), or None when the run has no browser
        tools: no Playwright package, no browser found, or a mode that offers none."""
        if importlib.util.find_spec("playwright") is None:
            return None
        found = find_browser(config, env)
        if found is None:
            return None
        policy = SitePolicy.from_config(
            config, mode, quest_network=quest_network, server_urls=_server_urls(home)
        )
        policy.visits = Visits.of_session(session)  # Why: a resume asks no site again
        if not policy.offered_tools():
            return None
        # Why: Chromium refuses to start as root unless its sandbox is off.
        args = ("--no-sandbox",) if hasattr(os, "geteuid") and os.geteuid() == 0 else ()
        if config.profile is not None:
            # Why: the user's own profile only when [browser] profile names it.
            profile = Path(config.profile).expanduser()
            browser = cls(found.path, profile, headless=config.headless, env=env, extra_args=args)
            browser.ours = False
        else:
            browser = cls.for_session(
                session, found.path, headless=config.headless, env=env, extra_args=args
            )
        browser.policy = policy
        browser.session_id = session.id
        browser.screenshots = config.screenshots
        return browser

    # ------------------------------------------------------------ running
    @property
    def running(self) -> bool:
        return self._context is not None

    def do(self, action: Callable[[BrowserSession], T]) -> T:
        """Run ``action`` on the browser's thread, launching the browser first if needed."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="hearth-browser")
            executor = self._executor
        if self.session_id:
            # Why before the launch: a stop must find the browser while it is starting too.
            with _live_lock:
                _live[self.session_id] = self
        return executor.submit(self._run, action).result()

    def later(self, action: Callable[[BrowserSession], object]) -> None:
        """Queue ``action`` on the browser's thread and return at once (a picture taken while
        the model thinks): it runs after what is queued and before the next :meth:`do`.

        Never launches the browser; does nothing when it is not running; its errors are
        dropped (what it does is a courtesy to the user, never the action's result).
        """
        with self._lock:
            executor = self._executor
        if executor is None or self._context is None:
            return

        def quietly() -> None:
            if self._context is not None and not self._closed:
                with contextlib.suppress(Exception):
                    action(self)

        with contextlib.suppress(RuntimeError):  # the executor was shut down meanwhile
            executor.submit(quietly)

    def _run(self, action: Callable[[BrowserSession], T]) -> T:
        from playwright.sync_api import Error

        if self._closed:
            # Why: the browser died under us (a stop, a crash); the next call starts afresh.
            self._shutdown()
        if self._context is None:
            self._stopped = False
            self._launch()
            if self._stopped:
                # Why: a stop that came while the browser started found no process to end.
                self._shutdown()
                raise BrowserError("the browser was stopped while it started")
        try:
            return action(self)
        except Error as exc:
            if self._closed or "has been closed" in str(exc):
                raise BrowserError(
                    "the browser was closed (stopped, or it crashed); browser_open starts it again"
                ) from None
            raise BrowserError(first_line(exc)) from None

    def _launch(self) -> None:
        try:
            from playwright.sync_api import Error, sync_playwright
        except ImportError:
            raise BrowserError(
                "the browser tools need the Python package playwright "
                "(pip install 'workhearth[browser]')"
            ) from None
        if self.ours:
            end_browsers_of(self.profile)
        self.profile.mkdir(mode=0o700, parents=True, exist_ok=True)
        env: dict[str, str | float | bool] | None = None
        if self.env is not None:
            # Why: Chromium keeps crash reports under ~/.config/chromium; the user's own
            # browser folders are never touched, so its config home is the profile's.
            env = {**self.env, "XDG_CONFIG_HOME": str(self.profile / "xdg-config")}
            env["XDG_CACHE_HOME"] = str(self.profile / "xdg-cache")
        proxy_args: tuple[str, ...] = ()
        if self.policy is not None:
            self._proxy = CheckingProxy(self.policy.check_connection)
            proxy_args = chromium_args(self._proxy.start())
        pw = sync_playwright().start()
        try:
            context = pw.chromium.launch_persistent_context(
                str(self.profile),
                executable_path=str(self.executable),
                headless=self.headless,
                args=[*QUIET_ARGS, *proxy_args, *self.extra_args],
                env=env,
                accept_downloads=True,
                timeout=self.timeout * 1000,
            )
        except Error as exc:
            pw.stop()
            self._stop_proxy()
            raise BrowserError(
                f"the browser {self.executable} did not start: {first_line(exc)}"
            ) from None
        context.set_default_timeout(self.timeout * 1000)
        context.route("**/*", self._route)
        context.add_init_script(_OPENS_JS)
        context.on("page", self._on_page)
        context.on("close", self._on_close)
        if self._proxy is not None:
            context.on("request", self._on_request)
        self._pw, self._context, self._closed = pw, context, False
        self._pids = _browser_pids(f"--user-data-dir={self.profile}".encode())
        self._current = context.pages[0] if context.pages else context.new_page()
        self._reopen()

    def _reopen(self) -> None:
        """Open again the tabs the last run of this session left open (a resume), each only
        if the site policy lets it open without asking (no question can be asked here)."""
        from playwright.sync_api import Error

        if self.tabs_file is None or not self.tabs_file.is_file():
            return
        try:
            urls = [u for u in orjson.loads(self.tabs_file.read_bytes()) if isinstance(u, str)]
        except (OSError, orjson.JSONDecodeError, TypeError):
            return
        page: Page | None = self._current
        for url in urls[:10]:
            verdict = self.policy.check_url(url) if self.policy is not None else None
            if verdict is not None and not verdict.ok:
                self.notes.append(f"{url} was open last time; browser_open opens it again")
                continue
            page = page or self.context.new_page()
            try:
                page.goto(url, timeout=self.timeout * 1000)
            except Error as exc:
                self.notes.append(f"{url} was open last time but did not load: {first_line(exc)}")
                continue
            self.notes.append(f"reopened {url}, open when this task's browser last closed")
            self._current, page = page, None

    def _route(self, route: Route, request: Request) -> None:
        """Let a request go out only when the site policy allows it (see the class doc)."""
        policy = self.policy
        if policy is None:
            route.fallback()
            return
        if request.is_navigation_request() and _top_level(request):
            verdict = policy.check_url(request.url)
            if verdict.outcome == "ask":
                self.blocked.append(
                    f"the page went to {verdict.site}, a site not visited yet in this session; "
                    "open it with browser_open (the user is asked first)"
                )
            elif not verdict.ok:
                self.blocked.append(f"the page went to {request.url[:200]}: {verdict.reason}")
        else:
            verdict = policy.check_resource(request.url)
        if verdict.ok:
            route.fallback()
        else:
            route.abort("blockedbyclient")

    def _on_request(self, request: Request) -> None:
        # Why every request, redirects too: Playwright announces each hop of a redirect
        # as a request, which ``route`` never sees (proxy.py).
        url = request.url.partition("#")[0]  # a fragment never reaches the network
        self._asked.add(url)
        with contextlib.suppress(HearthError):
            self._asked.add(site_of(url))

    def _refusals(self) -> list[str]:
        """The proxy's refusals a page caused, in words (see :class:`Refusal`).

        Chromium's own background requests go through the proxy too (update checks,
        accounts: plain ``http`` as well as tunnels) and are no news for the model, so a
        refusal is told only when a page asked for it (:attr:`Refusal.asked`). One that no
        page was seen asking for yet waits one action (the page's ``request`` event can
        arrive after the proxy refused), then is dropped.
        """
        if self._proxy is None:
            return []
        fresh = self._proxy.take_refusals()
        pending = self._held + fresh
        asked, self._asked = self._asked, set()
        self._held = [r for r in fresh if r.asked not in asked]
        return [r.words for r in pending if r.asked in asked]

    def _on_page(self, page: Page) -> None:
        self.opened.append(page)

    def _on_close(self, _context: BrowserContext) -> None:
        self._closed = True

    # --------------------------------------------------------------- tabs
    @property
    def context(self) -> BrowserContext:
        if self._context is None:
            raise BrowserError("the browser is not open")
        return self._context

    def tabs(self) -> list[Page]:
        return list(self.context.pages)

    def page(self) -> Page:
        """The current tab (a new empty one when every tab was closed)."""
        pages = self.context.pages
        if self._current is None or self._current not in pages:
            self._current = pages[-1] if pages else self.context.new_page()
        return self._current

    def switch(self, page: Page) -> None:
        self._current = page
        page.bring_to_front()

    def take_news(self) -> tuple[list[str], list[Page]]:
        """What happened since the last action: refused navigations and new tabs (the newest
        becomes the current tab, as it would on screen)."""
        self._await_tabs()
        blocked, self.blocked = self.blocked, []
        blocked += self._refusals()  # what redirects tried, the proxy refused (proxy.py)
        blocked += self._leave_unallowed()
        opened = [p for p in self.opened if not p.is_closed()]
        self.opened = []
        if opened:
            self._current = opened[-1]
        self._urls = [p.url for p in self.context.pages if p.url.startswith(("http:", "https:"))]
        return blocked, opened

    def _leave_unallowed(self) -> list[str]:
        """Empty the tabs a server's redirect took to a site the mode does not allow yet.

        Why after the fact: ``route`` never sees a redirect's hop, and the proxy sees only
        ``CONNECT host`` inside TLS, so neither can tell a hop to a new site (which the
        first-visit question or quest's allow list is about) from a page's own parts. The
        proxy has already held the hop to the address rules; here the page the hop landed
        on is not left to the model: the tab goes blank and the words say where it went.
        An upgrade of a visited site to https is the same visit.
        """
        policy = self.policy
        if policy is None:
            return []
        words: list[str] = []
        for page in self.context.pages:
            url = page.url
            if not url.startswith(("http:", "https:")):
                continue
            try:
                site = site_of(url)
            except HearthError:
                continue
            if site in self._landed:
                continue
            verdict = policy.check_url(url)
            upgraded = site.replace("https://", "http://", 1)
            if verdict.outcome == "ask" and upgraded != site and policy.visited(upgraded):
                policy.remember(site)
                verdict = policy.check_url(url)
            if verdict.ok:
                self._landed.add(site)
                continue
            if not policy.check_resource(url).ok:
                continue  # the proxy refused the hop itself: the tab shows its words
            with contextlib.suppress(Exception):
                page.goto("about:blank")
            if verdict.outcome == "ask":
                words.append(
                    f"a redirect took the page to {site}, a site not visited yet in this "
                    "session; the tab was emptied unread (the request had gone out): open it "
                    "with browser_open (the user is asked first)"
                )
            else:  # quest's allow list
                words.append(
                    f"a redirect took the page to {url[:200]}: {verdict.reason}; "
                    "the tab was emptied unread"
                )
        return words

    def take_notes(self) -> list[str]:
        """What the launch did that the model should hear (tabs reopened after a resume)."""
        notes, self.notes = self.notes, []
        return notes

    def _await_tabs(self) -> None:
        """Wait (briefly) for the tabs the current page asked to open to be announced."""
        from playwright.sync_api import Error

        page = self._current
        if page is None or page.is_closed():
            return
        try:
            asked = int(page.evaluate(_TAKE_OPENS_JS))
        except Error:
            return  # the page is navigating or gone: it opened nothing we could wait for
        while asked > len(self.opened):
            try:
                self.context.wait_for_event("page", timeout=POPUP_SECONDS * 1000)
            except Error:
                return  # a named window reused, or blocked: no new tab after all

    def snapshot(self, page: Page, max_chars: int) -> tuple[str, bool]:
        """The page as text with refs (``snapshot.js``), its frames' too, and whether it was
        cut (frames.py: which frame holds each ref)."""
        # Why imported here: frames.py imports this module.
        from workhearth.agent.browser.frames import read_tab

        return read_tab(self, page, _SNAPSHOT_JS, max_chars)

    # -------------------------------------------------------------- ending
    def close(self, grace: float = 5.0) -> None:
        """End the browser: politely when it answers within ``grace`` seconds, else killed.

        Any thread may call it; a call running on the browser's thread ends with an error.
        """
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is None:
            if not self.keep_profile:
                shutil.rmtree(self.profile, ignore_errors=True)
            return
        future = executor.submit(self._shutdown)
        try:
            future.result(timeout=grace)
        except Exception:
            self.kill()
            with contextlib.suppress(Exception):
                future.result(timeout=grace)
        executor.shutdown(wait=False)
        if not self.keep_profile:
            shutil.rmtree(self.profile, ignore_errors=True)

    def _shutdown(self) -> None:
        with _live_lock:
            if _live.get(self.session_id) is self:
                del _live[self.session_id]
        context, pw, closed = self._context, self._pw, self._closed
        if self.tabs_file is not None and context is not None:
            with contextlib.suppress(OSError):
                self.tabs_file.write_bytes(orjson.dumps(self._urls))
        self._context = self._pw = self._current = None
        self._closed = False
        self.opened, self.blocked = [], []
        try:
            if context is not None and not closed:
                context.close()
        finally:
            if pw is not None:
                pw.stop()
            self._stop_proxy()

    def _stop_proxy(self) -> None:
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.stop()

    def kill(self) -> int:
        """SIGKILL the browser at once, from any thread (a stop); how many groups ended."""
        self._stopped = True
        return end_browsers_of(self.profile, None if self.ours else self._pids)


def kill_browser_of(session_id: str) -> int:
    """End the running browser of a session at once (a user's stop, from any thread)."""
    with _live_lock:
        browser = _live.get(session_id)
    return browser.kill() if browser is not None else 0


def _server_urls(home: Path) -> list[str]:
    """Where hearth's own server answers (``server.json``), for the site policy to refuse.

    Why no liveness check: refusing the address of a server that is gone costs nothing.
    """
    try:
        data = orjson.loads((home / "server.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    url = data.get("url") if isinstance(data, dict) else None
    return [url] if isinstance(url, str) else []


def _top_level(request: Request) -> bool:
    """Whether a navigation loads a tab's page (not a frame inside one)."""
    try:
        return request.frame.parent_frame is None
    except Exception:
        return True  # Why: a popup's first request comes before its frame exists


def first_line(exc: BaseException) -> str:
    """The first line of an error (Playwright's messages go on with call logs)."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line.removeprefix("Error: ")[:300]


def end_browsers_of(profile: Path, only: Sequence[int] | None = None) -> int:
    """SIGKILL every browser of this user running on ``profile`` (with its process group);
    with ``only``, just those of these process ids.

    Why by profile: a session's profile folder names the session, so this finds the
    browser of a run that is gone as well as the live one, and never another program's.
    """
    mark = f"--user-data-dir={profile}".encode()
    ended = 0
    for pid in _browser_pids(mark):
        if only is not None and pid not in only:
            continue
        try:
            pgid = os.getpgid(pid)
            if pgid == pid:  # Why: Playwright starts the browser as its own group's leader
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            ended += 1
        except (ProcessLookupError, PermissionError):
            continue
    if ended:
        _wait_gone(mark, 2.0, only)
    return ended


def _browser_pids(mark: bytes) -> list[int]:
    found = []
    me = os.getuid()
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != me:
                continue
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark in args and not any(a.startswith(b"--type=") for a in args):
            found.append(int(entry.name))
    return found


def _wait_gone(mark: bytes, seconds: float, only: Sequence[int] | None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = _browser_pids(mark)
        if not [p for p in left if only is None or p in only]:
            return
        time.sleep(0.02)
