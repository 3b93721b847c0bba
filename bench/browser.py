"""The agent's browser (issue 25): time per tool action against Playwright called directly.

One Chromium (``--executable``, default Debian's ``/usr/bin/chromium``) serves both
sides in the same run, on a page of 2,000 interactive elements (1,000 links, 1,000
buttons) and a small form, both served by the bench on 127.0.0.1:

* **snapshot**: ``browser_snapshot`` through the real ``ToolRegistry.call`` (validation,
  gate, audit line, the in-page ``snapshot.js`` walk, token trim) on a freshly loaded page
  and again on the same page (refs already given); the default stops at 8,000 tokens, so
  also with ``max_tokens=30000``, which holds the whole page (~80,000 characters); beside Playwright's own
  ``locator("body").aria_snapshot()`` on a freshly loaded page and again;
* **click** / **type**: ``browser_click`` / ``browser_type`` by ref through the registry,
  beside ``locator.click()`` / ``locator.fill()`` on the same element, called on the
  browser's thread (the tools' calls run there too);
* **stop**: a ``browser_wait`` of 60 s is under way; the time from ``kill_browser_of``
  (what a user's stop calls) to the call's return, and to no browser process left.

Reloads are not timed, nor the page settling after one (the first script a page runs
after a load waits for it, whoever sends it). Tables go to stdout, every number to ``--out`` (JSON) and its
history. ``--quick`` runs 2 rounds (tests/agent/browser/test_bench.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _runs import save  # noqa: E402
from workhearth.agent.approval import allow_all  # noqa: E402
from workhearth.agent.browser.policy import SitePolicy  # noqa: E402
from workhearth.agent.browser.proxy import CheckingProxy, chromium_args  # noqa: E402
from workhearth.agent.browser.session import (  # noqa: E402
    QUIET_ARGS,
    BrowserSession,
    kill_browser_of,
)
from workhearth.agent.browser.tools import BROWSER_TOOLS  # noqa: E402
from workhearth.agent.browser.view import picture  # noqa: E402
from workhearth.agent.safefs import SafeFS  # noqa: E402
from workhearth.agent.tools import ToolContext, ToolRegistry  # noqa: E402
from workhearth.config import BrowserConfig, load_config  # noqa: E402
from workhearth.sessions.store import SessionStore  # noqa: E402
from workhearth.trash import Trash  # noqa: E402

BIG = (
    "<!doctype html><title>Big</title><ul>"
    + "".join(
        f"<li><a href='#l{n}'>link {n}</a> <button>button {n}</button></li>" for n in range(1000)
    )
    + "</ul>"
).encode()
FORM = b"<!doctype html><title>Form</title><label>Name <input name=n></label><button type=button>Go</button>"
IMAGES = 30  # a page load's subresources, each one request through the proxy
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def _page_of_images(query: str) -> bytes:
    images = "".join(f"<img src='/img?{query}&k={k}' width=8 height=8>" for k in range(IMAGES))
    return f"<!doctype html><title>Images</title><p>{IMAGES} images</p>{images}".encode()


class _Pages(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        kind = "text/html; charset=utf-8"
        if self.path.startswith("/big"):
            body = BIG
        elif self.path.startswith("/page?"):
            body = _page_of_images(self.path.partition("?")[2])
        elif self.path.startswith("/img?"):
            body, kind = PNG, "image/png"
        else:
            body = FORM
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _ms(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values), "min_ms": min(values), "n": len(values)}


def measure(executable: Path, rounds: int, tmp: Path) -> dict[str, Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    config = load_config({"HEARTH_HOME": str(tmp / "home")})
    workspace = tmp / "work"
    workspace.mkdir(exist_ok=True)
    session = SessionStore(config, workspace).create(mode="agent")
    args = ("--no-sandbox",) if os.geteuid() == 0 else ()
    env = {"HOME": str(tmp), "PATH": "/usr/bin:/bin"}
    browser = BrowserSession.for_session(session, executable, env=env, extra_args=args)
    browser.session_id = session.id
    browser.policy = SitePolicy.from_config(BrowserConfig(allow=("127.0.0.1",)), "agent")
    # Why off at first: the tools' own cost, then the same click with the picture after
    # it (the default, [browser] screenshots), which view.py queues on the browser's
    # thread: the click's result does not wait for it; its own cost is timed apart.
    browser.screenshots = False
    fs = SafeFS([workspace], trash=Trash(config.paths.trash), protected=[config.home])
    ctx = ToolContext(session=session, fs=fs, mode="agent", approver=allow_all, browser=browser)
    reg = ToolRegistry(BROWSER_TOOLS)
    ids = iter(range(1, 10**9))

    def tool(name: str, **arguments: Any) -> str:
        result = reg.call(name, arguments, ctx.for_call(f"call_{next(ids)}"))
        assert not result.is_error, result.content
        return result.content

    def reload() -> None:
        # Why the evaluate: a page's first script after a load waits for the page to
        # settle (tens to hundreds of ms), whichever side asks first; neither is timed on it.
        browser.do(lambda s: (s.page().reload(), s.page().evaluate("1")))

    out: dict[str, list[float]] = {
        k: []
        for k in (
            "snapshot_fresh",
            "snapshot_again",
            "snapshot_whole_fresh",
            "aria_fresh",
            "aria_again",
            "click_tool",
            "click_direct",
            "type_tool",
            "type_direct",
            "click_tool_picture",
            "picture",
            "load_hearth",
            "load_direct",
            "load_route_only",
            "load_proxy_only",
        )
    }
    try:
        tool("browser_open", url=f"{base}/big")
        for _ in range(rounds):
            reload()
            out["snapshot_fresh"].append(_ms(lambda: tool("browser_snapshot")))
            out["snapshot_again"].append(_ms(lambda: tool("browser_snapshot")))
            reload()
            whole = lambda: tool("browser_snapshot", max_tokens=30_000)  # noqa: E731
            out["snapshot_whole_fresh"].append(_ms(whole))
            reload()
            aria = lambda: browser.do(lambda s: s.page().locator("body").aria_snapshot())  # noqa: E731
            out["aria_fresh"].append(_ms(aria))
            out["aria_again"].append(_ms(aria))
        tool("browser_open", url=f"{base}/form")
        snap = tool("browser_snapshot")
        field = int(snap.split('textbox "Name"')[0].rsplit("[", 1)[1].split("]")[0])
        button = int(snap.split('button "Go"')[0].rsplit("[", 1)[1].split("]")[0])
        sel = '[data-hearth-ref="{}"]'
        click = lambda s: s.page().locator(sel.format(button)).click()  # noqa: E731
        for n in range(rounds * 5):
            text = f"v{n}"
            fill = lambda s, t=text: s.page().locator(sel.format(field)).fill(t)  # noqa: E731
            out["click_tool"].append(_ms(lambda: tool("browser_click", ref=button)))
            out["click_direct"].append(_ms(lambda: browser.do(click)))
            out["type_tool"].append(_ms(lambda t=text: tool("browser_type", ref=field, text=t)))
            out["type_direct"].append(_ms(lambda f=fill: browser.do(f)))
        browser.screenshots = True
        for _ in range(rounds * 5):
            out["click_tool_picture"].append(_ms(lambda: tool("browser_click", ref=button)))
            # Why untimed: the picture queued by the click runs now, as it would while
            # the model reads the result; then it is timed on its own.
            browser.do(lambda s: None)
            out["picture"].append(_ms(lambda: browser.do(picture)))
        browser.screenshots = False
        _page_loads(browser, executable, env, args, base, rounds, out)
        stop = _stop_latency(browser, tool, session.id, base)
    finally:
        browser.close()
        server.shutdown()
        session.close()
    report: dict[str, Any] = {k: _summary(v) for k, v in out.items()}
    for action in ("click", "type"):
        report[f"{action}_overhead_ms"] = (
            report[f"{action}_tool"]["median_ms"] - report[f"{action}_direct"]["median_ms"]
        )
    report["click_picture_overhead_ms"] = (
        report["click_tool_picture"]["median_ms"] - report["click_direct"]["median_ms"]
    )
    report["load_overhead_ms"] = (
        report["load_hearth"]["median_ms"] - report["load_direct"]["median_ms"]
    )
    for side in ("route", "proxy"):
        report[f"load_{side}_overhead_ms"] = (
            report[f"load_{side}_only"]["median_ms"] - report["load_direct"]["median_ms"]
        )
    report["images_per_load"] = IMAGES
    report["stop"] = stop
    report["elements"] = 2000
    return report


def _page_loads(
    browser: BrowserSession,
    executable: Path,
    env: dict[str, str],
    args: tuple[str, ...],
    base: str,
    rounds: int,
    out: dict[str, list[float]],
) -> None:
    """A page of :data:`IMAGES` images loaded in the session's browser (every request
    through the site policy's route and the checking proxy) and in a Chromium that
    Playwright launched plainly (no route, no proxy), in turn, never from a cache; and,
    to say where the difference goes, the plain one with only a do-nothing route
    (``route.fallback()``) and with only hearth's proxy."""
    from playwright.sync_api import sync_playwright

    assert browser.policy is not None
    proxy = CheckingProxy(browser.policy.check_connection)
    proxy_args = chromium_args(proxy.start())
    count = iter(range(10**9))

    def load(page: Any) -> None:
        page.goto(f"{base}/page?r={next(count)}", wait_until="load")

    with sync_playwright() as pw:
        quiet = [*QUIET_ARGS, *args]
        plain = pw.chromium.launch(executable_path=str(executable), args=quiet, env=env)
        proxied = pw.chromium.launch(
            executable_path=str(executable), args=[*quiet, *proxy_args], env=env
        )
        try:
            direct = plain.new_page()
            routed_context = plain.new_context()
            routed_context.route("**/*", lambda route: route.fallback())
            routed, through_proxy = routed_context.new_page(), proxied.new_page()
            sides: dict[str, Callable[[], object]] = {
                "load_hearth": lambda: browser.do(lambda s: load(s.page())),
                "load_direct": lambda: load(direct),
                "load_route_only": lambda: load(routed),
                "load_proxy_only": lambda: load(through_proxy),
            }
            for side in sides.values():
                side()  # warm: the first load of each pays for starting up
            for _ in range(rounds * 3):
                for key, side in sides.items():
                    out[key].append(_ms(side))
        finally:
            plain.close()
            proxied.close()
            proxy.stop()


def _stop_latency(
    browser: BrowserSession, tool: Callable[..., str], session_id: str, base: str
) -> dict[str, float]:
    done = threading.Event()

    def wait() -> None:
        try:
            tool("browser_wait", text="never there", seconds=60)
        except AssertionError:
            pass  # the call ends in an error: the browser was stopped under it
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    time.sleep(0.5)
    started = time.perf_counter()
    kill_browser_of(session_id)
    gone = (time.perf_counter() - started) * 1000
    done.wait(30)
    returned = (time.perf_counter() - started) * 1000
    return {"processes_gone_ms": gone, "call_returned_ms": returned}


def table(report: dict[str, Any]) -> str:
    rows = [
        "| action (2,000-element page for snapshots) | median ms | min ms |",
        "|---|---:|---:|",
    ]
    names = {
        "snapshot_fresh": "browser_snapshot, fresh page",
        "snapshot_again": "browser_snapshot, same page again",
        "snapshot_whole_fresh": "browser_snapshot max_tokens=30000 (whole page), fresh",
        "aria_fresh": "Playwright aria_snapshot(), fresh page",
        "aria_again": "Playwright aria_snapshot(), again",
        "click_tool": "browser_click (registry)",
        "click_direct": "locator.click() direct",
        "type_tool": "browser_type (registry)",
        "type_direct": "locator.fill() direct",
        "click_tool_picture": "browser_click (registry), picture on (the default)",
        "picture": "the picture itself (taken after the result, on the browser's thread)",
        "load_hearth": f"page load with {IMAGES} images, hearth's browser (route + proxy)",
        "load_direct": f"page load with {IMAGES} images, Chromium launched plainly",
        "load_route_only": "the same, plain Chromium with a do-nothing route only",
        "load_proxy_only": "the same, plain Chromium through hearth's proxy only",
    }
    for key, words in names.items():
        rows.append(f"| {words} | {report[key]['median_ms']:.1f} | {report[key]['min_ms']:.1f} |")
    rows.append(f"| click overhead | {report['click_overhead_ms']:.1f} | |")
    rows.append(f"| type overhead | {report['type_overhead_ms']:.1f} | |")
    rows.append(f"| click overhead, picture on | {report['click_picture_overhead_ms']:.1f} | |")
    rows.append(f"| page load overhead (route + proxy) | {report['load_overhead_ms']:.1f} | |")
    rows.append(f"| … a do-nothing route alone | {report['load_route_overhead_ms']:.1f} | |")
    rows.append(f"| … hearth's proxy alone | {report['load_proxy_overhead_ms']:.1f} | |")
    stop = report["stop"]
    rows.append(f"| stop: browser processes gone | {stop['processes_gone_ms']:.1f} | |")
    rows.append(f"| stop: the running call returned | {stop['call_returned_ms']:.1f} | |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executable", type=Path, default=Path("/usr/bin/chromium"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    parser.add_argument("--out", type=Path, default=None)
    ns = parser.parse_args()
    rounds = 2 if ns.quick else ns.rounds
    out = ns.out or ROOT / "bench" / "results" / (
        "browser-quick.json" if ns.quick else "browser.json"
    )
    with tempfile.TemporaryDirectory(prefix="hearth-bench-browser-") as tmp:
        report = measure(ns.executable, rounds, Path(tmp))
    report["load_average"] = os.getloadavg()[0]
    print(table(report))
    save(out, report)


if __name__ == "__main__":
    main()
