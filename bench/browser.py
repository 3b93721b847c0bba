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
from workhearth.agent.browser.session import BrowserSession, kill_browser_of  # noqa: E402
from workhearth.agent.browser.tools import BROWSER_TOOLS  # noqa: E402
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


class _Pages(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = BIG if self.path.startswith("/big") else FORM
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
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
    # Why off: the picture after each action (agent/browser/view.py, ~33 ms of frame
    # capture) is a feature beside the tools' own cost, which this bench compares.
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
    report["stop"] = stop
    report["elements"] = 2000
    return report


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
    }
    for key, words in names.items():
        rows.append(f"| {words} | {report[key]['median_ms']:.1f} | {report[key]['min_ms']:.1f} |")
    rows.append(f"| click overhead | {report['click_overhead_ms']:.1f} | |")
    rows.append(f"| type overhead | {report['type_overhead_ms']:.1f} | |")
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
