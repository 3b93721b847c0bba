"""Retake the README's screenshots of the workbench (desktop and phone).

Runs a real ``hearth serve`` in a temporary HEARTH_HOME with a scripted model server
(tests/fake_providers.py) and Debian's Chromium (Playwright), as the browser tests do:

    .venv/bin/python docs/screenshots.py           # into docs/
    .venv/bin/python docs/screenshots.py --out /tmp/shots   # elsewhere, to compare
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from tests.e2e.test_agent_run import calls_reply, text_reply  # noqa: E402
from tests.fake_providers import FakeProvider  # noqa: E402
from tests.server.test_browser import CHROMIUM, start_serve, stop_serve, wait_until  # noqa: E402

DESKTOP = {"width": 1280, "height": 760}
PHONE = {"width": 390, "height": 844}
SUMMARY = "# Decisions\n- Release on Thursdays\n- Staging needs the office VPN\n"


PY = shlex.quote(sys.executable)
MAKE_REPORT = f"{PY} -c " + shlex.quote(
    "from docx import Document; d = Document(); d.add_heading('Quarterly report', 1);"
    " d.add_paragraph('Sales grew 12 % in the third quarter; costs held steady.');"
    " t = d.add_table(rows=3, cols=3); t.style = 'Table Grid';"
    " [t.cell(r, c).__setattr__('text', v) for r, row in enumerate("
    "[['Region', 'Sales', 'Growth'], ['East', '1,240', '+14 %'], ['South', '980', '+9 %']])"
    " for c, v in enumerate(row)]; d.save('report.docx')"
)
MAKE_SUMS = f"{PY} -c " + shlex.quote(
    "from openpyxl import Workbook; wb = Workbook(); ws = wb.active;"
    " ws.append(['Region', 'Sales']); ws.append(['East', 1240]); ws.append(['South', 980]);"
    " ws.append(['Total', '=SUM(B2:B3)']); wb.save('sums.xlsx')"
)


def replies() -> list:
    return [
        calls_reply(
            "openai", ("c1", "write_file", {"path": "notes/draft.md", "content": "draft\n"})
        ),
        calls_reply("openai", ("c2", "delete", {"path": "old-notes.txt"})),
        text_reply(
            "openai", "Cleaned up: the **draft** is written, the old notes are in the trash."
        ),
        calls_reply("openai", ("r1", "shell", {"command": MAKE_REPORT})),
        calls_reply("openai", ("r2", "shell", {"command": MAKE_SUMS})),
        text_reply("openai", "The report and the sums are ready."),
        calls_reply(
            "openai", ("c3", "write_file", {"path": "notes/summary.md", "content": SUMMARY})
        ),
        text_reply("openai", "Done."),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp())
    with FakeProvider(replies()) as fake:
        env = {
            "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "sk-test",
            "HEARTH_MODEL": "openai:qwen-plus",
        }
        bench = start_serve(root, env)
        try:
            shoot(bench, out)
        finally:
            stop_serve(bench)
    print(f"wrote the screenshots into {out}")


def shoot(bench, out: Path) -> None:  # type: ignore[no-untyped-def]
    (bench.workspace / "old-notes.txt").write_text("old\n")
    task = {"task": "Tidy the notes folder and remove the old notes", "mode": "quest"}
    sid = bench.api.post("/v1/tasks", json=task).json()["session_id"]
    wait_until("the task", lambda: bench.api.get(f"/v1/tasks/{sid}").json()["status"] == "done", 30)
    task = {"task": "Write the quarterly report and the sums", "mode": "quest"}
    made = bench.api.post("/v1/tasks", json=task).json()["session_id"]
    wait_until(
        "the report task",
        lambda: bench.api.get(f"/v1/tasks/{made}").json()["status"] in ("done", "failed"),
        120,
    )
    bench.save("Staging deploys need the office VPN", tags=["ops"])
    bench.save("Reports go to Lin every Friday before 17:00", tags=["team"])
    bench.save(
        "The release train leaves on Thursdays; freeze the branch on Wednesday evening",
        level="critical",
        tags=["release"],
    )
    bench.save("Old fact to delete", tags=["tmp"])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        stranger = browser.new_context(viewport=DESKTOP).new_page()
        stranger.goto(f"{bench.base}/")
        expect(stranger.locator("#signin")).to_be_visible()
        stranger.screenshot(path=str(out / "workbench-signin.png"))
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.goto(bench.login_url)
        page.wait_for_url(f"{bench.base}/")
        # The memory panel with its undo toast.
        page.goto(f"{bench.base}/#/memory")
        expect(page.locator("#memory-list li")).to_have_count(4)
        page.get_by_role("button", name="Delete: Old fact to delete").click()
        expect(page.locator(".toast")).to_be_visible()
        page.mouse.move(1, 1)
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / "workbench-memory.png"))
        page.locator(".toast button").click()
        # A chat waiting for the user's approval.
        page.goto(f"{bench.base}/#/chat")
        page.locator(".chat-form textarea").fill(
            "Summarise the decisions in memory into notes/summary.md"
        )
        page.locator('.chat-form select[name="mode"]').select_option("agent")
        page.locator(".chat-form button[type=submit]").click()
        expect(page.locator(".approval")).to_be_visible(timeout=20000)
        page.mouse.move(1, 1)
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / "workbench-chat-approval.png"))
        chat = page.url.split("#", 1)[1]
        # What a task produced, with hearth's receipt for each file (issue #21).
        page.goto(f"{bench.base}/#/tasks/{made}")
        expect(page.locator(".receipts-box .receipt")).to_have_count(2, timeout=30000)
        page.locator(".receipts-box").scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        page.screenshot(path=str(out / "workbench-receipts.png"))
        page.set_viewport_size(PHONE)
        for name, where in (
            ("tasks", "/tasks"),
            ("chat", chat.removeprefix("#")),
            ("trash", "/trash"),
        ):
            page.goto(f"{bench.base}/#{where}")
            page.wait_for_timeout(1200)
            page.screenshot(path=str(out / f"workbench-phone-{name}.png"))
        browser.close()


if __name__ == "__main__":
    main()
