"""The workbench at phone width (390×844) and its small keyboard and wording fixes (#19 items 5, 6).

Real ``hearth serve`` in a temporary HEARTH_HOME, Debian's Chromium through Playwright;
the model is ``tests/fake_providers.py`` on loopback. Every view at 390 px: the page never
scrolls sideways, a table wider than the screen scrolls inside its own wrapper, audit rows
stay compact, the sidebar is a bar across the top. Then: the undo toast stays while it has
focus, Ctrl+Z takes a delete back, a language switch keeps what is typed, the all-tasks
audit names each row's task, a system folder as workspace is warned about before sending,
a duplicate memory says it was already saved, and text contrast is WCAG AA (4.5:1) in the
light and the dark colour scheme.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    CHROMIUM,
    Workbench,
    browser,
    open_page,
    row,
    start_serve,
    stop_serve,
    sync_api,
    wait_until,
)

MODEL = "openai:qwen-plus"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
TITLE = "Tidy the notes: write a fresh summary and remove the obsolete draft nobody reads"
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")

# The page's own measure of what overflows: the document's width, and every table that is
# wider than the screen without an ancestor that scrolls sideways (overflow-x auto|scroll).
OVERFLOW_JS = """() => {
  const loose = [];
  for (const table of document.querySelectorAll("table")) {
    if (!table.getClientRects().length) continue;
    if (table.scrollWidth <= innerWidth && table.getBoundingClientRect().right <= innerWidth + 0.5) continue;
    let el = table.parentElement, held = false;
    for (; el && el !== document.body; el = el.parentElement) {
      const o = getComputedStyle(el).overflowX;
      if (o === "auto" || o === "scroll") { held = true; break; }
    }
    if (!held) loose.push(table.id || table.className);
  }
  return { scrollWidth: document.scrollingElement.scrollWidth, innerWidth, loose };
}"""

# WCAG contrast of an element's text against what is really behind it: its own and its
# ancestors' background colours composited (alpha included) down to the first opaque one.
CONTRAST_JS = """(sel) => {
  // Found and measured in one tick: a re-render between a locator's lookup and its
  // evaluate would leave a detached element whose computed colours are empty.
  const el = document.querySelector(sel);
  if (!el) throw new Error("no element " + sel);
  const parse = (c) => {
    const m = String(c).match(/rgba?\\(([^)]+)\\)/);
    if (!m) throw new Error("unexpected colour " + c);
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = parse(getComputedStyle(n).backgroundColor);
    if (c[3] > 0) layers.push(c);
    if (c[3] >= 1) break;
  }
  let bg = [255, 255, 255];
  for (const c of layers.reverse()) bg = bg.map((v, i) => c[i] * c[3] + v * (1 - c[3]));
  const f = parse(getComputedStyle(el).color);
  const fg = [0, 1, 2].map((i) => f[i] * f[3] + bg[i] * (1 - f[3]));
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}"""


@pytest.fixture
def stocked(tmp_path: Path) -> Iterator[tuple[Workbench, str]]:
    """A server whose one finished task wrote a file and deleted another (so the trash,
    the audit and the task's files are not empty), plus two memories."""
    replies = [
        calls_reply(
            "openai",
            ("call_w", "write_file", {"path": "notes/summary.md", "content": "# Summary\n"}),
        ),
        calls_reply(
            "openai", ("call_d", "delete", {"path": "old-draft-with-a-rather-long-name.txt"})
        ),
        text_reply("openai", "Done: ", "summary written, draft removed."),
    ]
    with FakeProvider(replies) as fake:
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
        bench = start_serve(tmp_path, env)
        try:
            (bench.workspace / "old-draft-with-a-rather-long-name.txt").write_text("old\n")
            answer = bench.api.post("/v1/tasks", json={"task": TITLE, "mode": "quest"})
            assert answer.status_code == 201, answer.text
            sid = str(answer.json()["session_id"])
            wait_until(
                "the task to finish",
                lambda: bench.api.get(f"/v1/tasks/{sid}").json()["status"] == "done",
                timeout=30,
            )
            bench.save("The release train leaves on Thursdays", level="critical", tags=["release"])
            bench.save("Staging deploys need the office VPN", tags=["ops"])
            yield bench, sid
        finally:
            stop_serve(bench)


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Workbench]:
    bench = start_serve(tmp_path)
    yield bench
    stop_serve(bench)


def assert_no_sideways_scroll(page: Any, where: str) -> None:
    seen = page.evaluate(OVERFLOW_JS)
    assert seen["scrollWidth"] <= seen["innerWidth"], f"{where}: the page scrolls sideways: {seen}"
    assert not seen["loose"], f"{where}: a table wider than the screen does not scroll: {seen}"


# ----------------------------------------------------------------------- phone width
def test_every_view_fits_a_phone_and_tables_scroll_inside_their_wrapper(
    stocked: tuple[Workbench, str], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench, sid = stocked
    page = open_page(bench, viewport=PHONE)

    page.goto(f"{bench.base}/#/tasks")
    expect(page.locator(f'#tasks-table tr[data-id="{sid}"]')).to_contain_text("Tidy the notes")
    assert_no_sideways_scroll(page, "tasks")
    # The sidebar is a bar across the top; its colour stays behind it, not the content.
    bar = page.locator(".sidebar").bounding_box()
    main = page.locator("main").bounding_box()
    assert bar["height"] < 80 and bar["y"] + bar["height"] <= main["y"] + 1, (bar, main)
    assert (
        page.evaluate("getComputedStyle(document.querySelector('.shell')).backgroundImage")
        == "none"
    )
    for view in ("tasks", "chat", "memory", "skills", "trash"):
        expect(page.locator(f'.nav a[data-view="{view}"]')).to_be_attached()

    page.goto(f"{bench.base}/#/tasks/{sid}")
    expect(page.locator("#view-tasks .files-box")).to_contain_text("summary.md")
    page.locator("#view-tasks .btn-audit").click()
    audit = page.locator("#view-tasks table.audit tbody tr")
    expect(audit).to_have_count(2)
    assert_no_sideways_scroll(page, "one task")
    for box in (audit.nth(i).bounding_box() for i in range(2)):
        assert box["height"] < 180, f"an audit row is {box['height']} px tall"

    page.goto(f"{bench.base}/#/chat")
    expect(page.locator(".chat-form textarea")).to_be_visible()
    assert_no_sideways_scroll(page, "chat form")
    page.goto(f"{bench.base}/#/chat/{sid}")
    expect(page.locator("#view-chat .task-head")).to_be_visible()
    assert_no_sideways_scroll(page, "a chat")

    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#memory-list li")).to_have_count(2)
    assert_no_sideways_scroll(page, "memory")

    page.goto(f"{bench.base}/#/skills")
    expect(page.locator(".skill-card").first).to_be_visible()
    page.locator("button.example").first.click()
    expect(page.locator(".example-form")).to_be_visible()
    assert_no_sideways_scroll(page, "skills")

    page.goto(f"{bench.base}/#/trash")
    expect(page.locator(".trash-box table tbody tr")).to_have_count(1)
    rows = page.locator("#view-trash .audit-box table.audit tbody tr")
    expect(rows).to_have_count(2)
    assert_no_sideways_scroll(page, "trash & audit")
    for box in (rows.nth(i).bounding_box() for i in range(2)):
        assert box["height"] < 180, f"an audit row is {box['height']} px tall"

    # A table wider than the screen (the audit at a width where it stays a table) scrolls
    # inside its wrapper, and the page still does not.
    page.set_viewport_size({"width": 700, "height": 844})
    page.evaluate(
        "document.querySelector('#view-trash .audit-box table').style.minWidth = '1200px'"
    )
    wrapper = page.locator("#view-trash .audit-box .table-wrap")
    assert wrapper.evaluate("w => w.scrollWidth > w.clientWidth")
    assert wrapper.evaluate("w => getComputedStyle(w).overflowX") in ("auto", "scroll")
    assert_no_sideways_scroll(page, "a wide audit table")


def test_toasts_stack_in_a_corner_and_at_the_bottom_edge_on_a_phone(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    for n in range(5):
        plain.save(f"Fact number {n} worth keeping")
    page = open_page(plain, viewport=DESKTOP)
    page.goto(f"{plain.base}/#/memory")
    sync_api.expect(page.locator("#memory-list li")).to_have_count(5)
    for n in range(5):
        row(page, f"Fact number {n}").get_by_role("button", name=re.compile("^Delete")).click()
    toasts = page.locator(".toast")
    sync_api.expect(toasts).to_have_count(3)  # at most three at a time
    box = page.locator("#toasts").bounding_box()
    assert box["x"] > DESKTOP["width"] / 2 and box["width"] <= 430, box  # a corner
    assert box["height"] < DESKTOP["height"] / 3, box
    # Five deletes, the two oldest toasts pushed out: every delete still commits.
    wait_until("the deletes to commit", lambda: plain.memory() == [], timeout=15)

    phone = page
    phone.set_viewport_size(PHONE)
    plain.save("One more fact")
    phone.goto(f"{plain.base}/#/memory")
    row(phone, "One more fact").get_by_role("button", name=re.compile("^Delete")).click()
    toast = phone.locator(".toast").bounding_box()
    assert PHONE["height"] - (toast["y"] + toast["height"]) <= 24, toast  # the bottom edge
    assert toast["x"] >= 0 and toast["x"] + toast["width"] <= PHONE["width"], toast


# ----------------------------------------------------------------------- undo
def test_the_undo_toast_stays_while_focused_and_the_delete_waits_for_it(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    plain.save("Hold on to this one")
    plain.save("Another fact")
    page = open_page(plain, viewport=DESKTOP)
    page.goto(f"{plain.base}/#/memory")
    row(page, "Hold on").get_by_role("button", name=re.compile("^Delete")).click()
    undo = page.locator(".toast").get_by_role("button", name="Undo")
    undo.focus()
    page.wait_for_timeout(6500)  # past both the toast's 4 s and the delete's 5 s
    expect(undo).to_be_visible()
    assert len(plain.memory()) == 2  # nothing sent while the toast is held
    page.keyboard.press("Enter")
    expect(row(page, "Hold on")).to_be_visible()
    expect(page.locator(".toast", has_text="Memory deleted")).to_have_count(0)

    # Held by the pointer, then let go: it goes, then the delete is sent.
    row(page, "Hold on").get_by_role("button", name=re.compile("^Delete")).click()
    toast = page.locator(".toast", has_text="Memory deleted")
    toast.hover()
    page.wait_for_timeout(5000)
    expect(toast).to_be_visible()
    page.mouse.move(5, 5)
    expect(toast).to_be_hidden(timeout=6000)
    wait_until("the delete to commit", lambda: len(plain.memory()) == 1, timeout=10)


def test_ctrl_z_takes_back_the_last_delete_pending_or_sent(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    plain.save("First fact to delete")
    plain.save("Second fact to delete")
    page = open_page(plain, viewport=DESKTOP)
    page.goto(f"{plain.base}/#/memory")
    row(page, "First fact").get_by_role("button", name=re.compile("^Delete")).click()
    # Focus lands in the search box; nothing typed since, so Ctrl+Z is the delete's undo.
    expect(page.locator("#memory-search")).to_be_focused()
    page.keyboard.press("Control+z")
    expect(row(page, "First fact")).to_be_visible()
    expect(page.locator(".toast", has_text="Memory restored")).to_be_visible()

    # A delete already sent comes back too (POST /v1/memory/{id}/restore), outside a field.
    row(page, "Second fact").get_by_role("button", name=re.compile("^Delete")).click()
    wait_until("the delete to commit", lambda: len(plain.memory()) == 1, timeout=12)
    page.locator("#view-title").click()
    page.keyboard.press("Control+z")
    expect(row(page, "Second fact")).to_be_visible()
    wait_until("the entry back", lambda: len(plain.memory()) == 2)

    # Typed in a field after the delete: Ctrl+Z there is the field's own undo.
    row(page, "Second fact").get_by_role("button", name=re.compile("^Delete")).click()
    page.locator("#memory-search").press_sequentially("abc")
    page.locator("#memory-search").press("Control+z")
    expect(row(page, "Second fact")).to_have_count(0)


# ----------------------------------------------------------------------- drafts
def test_a_language_switch_keeps_the_chat_draft_and_the_memory_form(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    page = open_page(plain, viewport=DESKTOP)
    page.goto(f"{plain.base}/#/chat")
    form = page.locator(".chat-form")
    form.locator("textarea").fill("Summarise the notes, 草稿 kept")
    form.locator('input[name="workspace"]').fill("/tmp/somewhere/else")
    form.locator('select[name="mode"]').select_option("quest")
    form.locator('input[name="model"]').fill("light")
    page.get_by_label("Language").select_option("zh")
    expect(page.get_by_label("要智能体做什么？")).to_have_value("Summarise the notes, 草稿 kept")
    expect(form.locator('input[name="workspace"]')).to_have_value("/tmp/somewhere/else")
    expect(form.locator('select[name="mode"]')).to_have_value("quest")
    expect(form.locator('input[name="model"]')).to_have_value("light")

    page.goto(f"{plain.base}/#/memory")
    page.get_by_role("button", name="新建记忆").click()
    page.get_by_label("要记住什么？").fill("Half-typed memory")
    page.get_by_label("语言").select_option("en")
    expect(page.get_by_label("What should be remembered?")).to_have_value("Half-typed memory")


# ----------------------------------------------------------------------- words
def test_the_all_tasks_audit_names_each_rows_task_and_the_hints_tell_the_truth(
    stocked: tuple[Workbench, str], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench, sid = stocked
    page = open_page(bench, viewport=DESKTOP)
    page.goto(f"{bench.base}/#/trash")
    expect(page.locator(".trash-box")).to_contain_text("old-draft-with-a-rather-long-name.txt")
    # The trash holds deleted files; overwritten ones are reached from their task.
    expect(page.locator("#view-trash > p.muted").first).to_contain_text("Restore previous version")
    table = page.locator("#view-trash .audit-box table.audit")
    expect(table.locator("thead th").nth(1)).to_have_text("Task")
    links = table.locator("tbody td.cell-task a")
    expect(links).to_have_count(2)
    expect(links.first).to_contain_text("Tidy the notes")
    assert links.first.get_attribute("href") == f"#/tasks/{sid}"
    links.first.click()
    expect(page).to_have_url(re.compile(f"#/tasks/{sid}$"))
    # One task's own audit needs no Task column.
    page.locator("#view-tasks .btn-audit").click()
    expect(page.locator("#view-tasks table.audit thead th").nth(1)).to_have_text("Tool")

    # "Always allow" says it is for this task only (label and tooltip), in both languages.
    keys = page.evaluate(
        "import('/i18n.js').then(m => { m.setLang('zh'); const zh = [m.t('approval.always'), m.t('approval.alwaysHint')]; m.setLang('en'); return [m.t('approval.always'), m.t('approval.alwaysHint'), ...zh]; })"
    )
    assert keys[0] == "Always allow (this task)" and "this task" in keys[1]
    assert keys[2] == "本任务内总是允许" and "任务" in keys[3]


def test_a_system_folder_as_workspace_is_warned_before_sending(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    page = open_page(plain, viewport=DESKTOP)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    page.goto(f"{plain.base}/#/chat")
    form = page.locator(".chat-form")
    form.locator("textarea").fill("Look around")
    form.locator('input[name="workspace"]').fill("/etc")
    form.get_by_role("button", name="Start task").click()
    warning = form.locator(".form-warn")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("/etc is a system folder")
    anyway = form.get_by_role("button", name="Start in this folder anyway")
    expect(anyway).to_be_visible()
    assert not sent  # nothing sent yet
    # Another folder: the warning goes; back to /etc: asked again.
    form.locator('input[name="workspace"]').fill(str(plain.workspace))
    expect(warning).to_be_hidden()
    form.locator('input[name="workspace"]').fill("/etc/")
    page.keyboard.press("Control+Enter")
    expect(warning).to_be_visible()
    assert not sent
    with page.expect_request(lambda r: r.url.endswith("/v1/tasks") and r.method == "POST"):
        anyway.click()
    verdicts = page.evaluate(
        """import('/chat.js').then(m => ["/", "/usr/local/bin", "/var", "/var/www/site", "/home/ana",
           "/home/ana/project", "~", "/tmp/work", "/root", "C:\\\\"].map(m.riskyFolder))"""
    )
    assert verdicts == [
        "system",
        "system",
        "system",
        "",
        "home",
        "",
        "home",
        "",
        "system",
        "system",
    ]


def test_saving_a_memory_twice_says_it_was_already_saved(
    plain: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    page = open_page(plain, viewport=DESKTOP)
    page.goto(f"{plain.base}/#/memory")
    for expected in ("Saved", "Already saved: this memory existed, nothing was added"):
        page.get_by_role("button", name="New memory").click()
        page.get_by_label("What should be remembered?").fill("Reports go to Lin on Fridays")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator(".toast").last).to_have_text(expected)
    assert len(plain.memory()) == 1
    expect(page.locator("#memory-list li")).to_have_count(1)


# ----------------------------------------------------------------------- contrast
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_badges_and_the_sidebar_footer_meet_wcag_aa(
    scheme: str, plain: Workbench, open_page: Callable[..., Any]
) -> None:
    plain.save("A critical fact", level="critical")
    plain.save("A normal fact", level="normal")
    page = open_page(plain, viewport=DESKTOP, color_scheme=scheme)
    page.goto(f"{plain.base}/#/memory")
    sync_api.expect(page.locator("#memory-list li")).to_have_count(2)
    sync_api.expect(page.locator("#info-version")).not_to_be_empty()
    for sel in (
        ".badge-level-critical",
        ".badge-level-normal",
        "#info-workspace",
        "#info-version",
        ".meta .muted",
    ):
        ratio = page.evaluate(CONTRAST_JS, sel)
        assert ratio >= 4.5, f"{scheme}: {sel} has contrast {ratio:.2f}:1"
