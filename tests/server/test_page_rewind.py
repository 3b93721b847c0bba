"""In the browser (issue #22): a task's view lists its turns with "Rewind to here", shows
the server's dry run (each file with its action, its diff, conflicts) in a dialog and
rewinds only when asked; the files on disk go back byte for byte, the turn shows undone,
a file the user changed meanwhile is refused in words and rewound only when forced (its
version kept in the trash), in English and in Chinese.

``hearth serve`` runs for real, with ``tests/fake_providers.py`` as its model.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    sync_api,
    wait_until,
)
from tests.server.test_browser_tasks import bench_with  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")

BEFORE = b"first line\nold <b>words</b> & more\nlast line\n"
AFTER = b"first line\nnew <b>words</b> & more\nlast line\n"
COMMAND = "sed -i s/old/new/ notes.txt && printf 'made by the task\\n' > made.txt"
PROMPT = "Update the notes and make made.txt"

WORDS = {
    "en-US": {
        "turn": "Turn 1",
        "here": "Rewind to here",
        "title": "Rewind to before turn 1",
        "restore": "put back",
        "delete": "remove",
        "conversation": "The conversation ends before this turn",
        "apply": "Rewind",
        "refused": "Nothing was rewound: notes.txt changed outside this task",
        "conflict": "changed outside this task",
        "force": "Rewind anyway (the changed files go to the trash)",
        "undone": "undone",
        "done": "Rewound to before turn 1. 2 files put back.",
        "status": "done",
        "allow": "Allow once",
    },
    "zh-CN": {
        "turn": "第 1 轮",
        "here": "回退到这里",
        "title": "回退到第 1 轮之前",
        "restore": "恢复",
        "delete": "移除",
        "conversation": "对话将结束在这一轮之前",
        "apply": "回退",
        "refused": "没有回退任何内容：notes.txt 在任务最后一次改动之后",
        "conflict": "在任务之外被改动",
        "force": "仍然回退（被改动的文件移到回收站）",
        "undone": "已撤销",
        "done": "已回退到第 1 轮之前。恢复了 2 个文件。",
        "status": "已完成",
        "allow": "允许一次",
    },
}


def _start(bench: Workbench, mode: str) -> str:
    (bench.workspace / "notes.txt").write_bytes(BEFORE)
    answer = bench.api.post("/v1/tasks", json={"task": PROMPT, "mode": mode})
    assert answer.status_code in (200, 201, 202), answer.text
    return str(answer.json()["session_id"])


def _replies() -> list[Any]:
    return [
        calls_reply("openai", ("call_sh", "shell", {"command": COMMAND})),
        text_reply("openai", "Notes updated."),
    ]


def test_rewind_to_here_previews_the_diff_and_puts_the_files_back(
    bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    words = WORDS["en-US"]
    bench = bench_with(_replies())
    sid = _start(bench, "agent")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/tasks/{sid}")

    # While the task waits for the user, its turn is listed but cannot be rewound.
    turn = page.locator(".turns .turn").first
    expect(turn.locator(".turn-prompt")).to_have_text(PROMPT)
    expect(turn.get_by_role("button", name=words["here"])).to_be_disabled()
    page.locator(".approval").get_by_role("button", name=words["allow"]).click()
    expect(page.locator(".task-status .badge")).to_have_text(words["status"], timeout=60000)
    assert (bench.workspace / "notes.txt").read_bytes() == AFTER

    expect(turn.locator(".turn-badge")).to_have_text(words["turn"])
    expect(turn.locator(".turn-file")).to_have_text(["made.txt", "notes.txt"], timeout=15000)
    turn.get_by_role("button", name=words["here"]).click()

    dialog = page.get_by_role("dialog", name=words["title"])
    expect(dialog).to_be_visible()
    notes = dialog.locator('.rewind-file[data-path="notes.txt"]')
    made = dialog.locator('.rewind-file[data-path="made.txt"]')
    expect(notes.locator(".badge").first).to_have_text(words["restore"])
    expect(made.locator(".badge").first).to_have_text(words["delete"])
    code = notes.locator(".rewind-diff-code")
    expect(code).to_be_visible()
    # The diff from now back to then, as text: the markup in the file is not parsed.
    expect(code.locator(".diff-del")).to_contain_text(["new <b>words</b> & more"])
    expect(code.locator(".diff-add")).to_contain_text(["old <b>words</b> & more"])
    assert dialog.locator(".rewind-plan b").count() == 0
    expect(dialog.locator(".rewind-conversation")).to_contain_text(words["conversation"])
    expect(dialog.locator(".rewind-force")).to_be_hidden()
    # A dry run changed nothing.
    assert (bench.workspace / "notes.txt").read_bytes() == AFTER
    assert (bench.workspace / "made.txt").exists()

    # Each option asks the server again: conversation only leaves the files, files only
    # keeps the conversation (the two never together).
    dialog.get_by_label("Conversation only").check()
    expect(dialog.locator(".rewind-plan")).to_contain_text("The files stay as they are.")
    expect(dialog.locator(".rewind-file")).to_have_count(0)
    dialog.get_by_label("Files only").check()
    expect(dialog.get_by_label("Conversation only")).not_to_be_checked()
    expect(dialog.locator(".rewind-conversation")).to_have_text("The conversation stays as it is.")
    expect(dialog.locator(".rewind-file")).to_have_count(2)
    dialog.get_by_label("Files only").uncheck()
    expect(dialog.locator(".rewind-conversation")).to_contain_text(words["conversation"])

    # The diff folds away, and Cancel changes nothing.
    notes.locator(".rewind-diff summary").click()
    expect(code).to_be_hidden()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert (bench.workspace / "notes.txt").read_bytes() == AFTER

    turn.get_by_role("button", name=words["here"]).click()
    dialog = page.get_by_role("dialog", name=words["title"])
    dialog.get_by_role("button", name=words["apply"], exact=True).click()
    expect(dialog).to_have_count(0)
    wait_until("notes.txt put back", lambda: (bench.workspace / "notes.txt").read_bytes() == BEFORE)
    assert not (bench.workspace / "made.txt").exists()
    expect(page.locator(".rewind-done")).to_have_text(
        words["done"] + " The conversation now ends before that turn."
    )
    undone = page.locator(".turns .turn").first
    expect(undone).to_have_class("turn turn-undone")
    expect(undone.locator(".turn-badge")).to_have_text(words["undone"])
    expect(undone.locator(".btn-rewind")).to_have_count(0)


def test_after_a_rewind_the_thread_ends_before_the_undone_turn(
    bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with(_replies())
    sid = _start(bench, "quest")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/tasks/{sid}")
    expect(page.locator(".task-status .badge")).to_have_text("done", timeout=60000)
    expect(page.locator(".thread .msg-user")).to_have_text(["You" + PROMPT])
    page.locator(".turns .turn").first.get_by_role("button", name="Rewind to here").click()
    page.get_by_role("dialog").get_by_role("button", name="Rewind", exact=True).click()
    expect(page.locator(".turns .turn-undone")).to_have_count(1)
    # The thread is reloaded, and so is the page: the undone prompt and its call are gone.
    for _ in range(2):
        expect(page.locator(".task-status .badge")).to_have_text("done")
        expect(page.locator(".thread .msg-user")).to_have_count(0)
        expect(page.locator(".thread details.tool")).to_have_count(0)
        page.reload()


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_file_changed_meanwhile_is_refused_in_words_and_rewound_when_forced(
    locale: str, bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    words = WORDS[locale]
    bench = bench_with(_replies())
    sid = _start(bench, "quest")
    page = open_page(bench, locale=locale)
    page.goto(f"{bench.base}/#/tasks/{sid}")
    expect(page.locator(".task-status .badge")).to_have_text(words["status"], timeout=60000)
    turn = page.locator(".turns .turn").first
    expect(turn.locator(".turn-badge")).to_have_text(words["turn"])
    turn.get_by_role("button", name=words["here"]).click()
    dialog = page.get_by_role("dialog", name=words["title"])
    expect(dialog.locator('.rewind-file[data-path="notes.txt"] .badge').first).to_have_text(
        words["restore"]
    )

    # The user edits the file while the preview is open: the plain rewind is refused.
    edited = b"the user's own edit\n"
    (bench.workspace / "notes.txt").write_bytes(edited)
    dialog.get_by_role("button", name=words["apply"], exact=True).click()
    expect(dialog.locator(".rewind-error")).to_contain_text(words["refused"])
    assert (bench.workspace / "notes.txt").read_bytes() == edited
    assert (bench.workspace / "made.txt").exists()
    conflict = dialog.locator('.rewind-file[data-path="notes.txt"]')
    expect(conflict).to_have_class("rewind-file rewind-conflict")
    expect(conflict.locator(".badge-conflict")).to_have_text(words["conflict"])
    expect(dialog.locator(".rewind-apply")).to_be_hidden()
    force = dialog.get_by_role("button", name=words["force"])
    expect(force).to_be_visible()
    if locale == "en-US":
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "rewind-preview-conflict.png"))

    force.click()
    expect(dialog).to_have_count(0)
    wait_until("notes.txt put back", lambda: (bench.workspace / "notes.txt").read_bytes() == BEFORE)
    assert not (bench.workspace / "made.txt").exists()
    expect(page.locator(".rewind-done")).to_contain_text(words["done"])
    expect(page.locator(".turns .turn-undone .turn-badge")).to_have_text(words["undone"])
    # The user's version went to the trash, restorable.
    items = bench.api.get("/v1/trash").json()["items"]
    assert any(i["original"].endswith("notes.txt") for i in items), items
