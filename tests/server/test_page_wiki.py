"""In the browser (issue 24): the wiki view lists the pages hearth wrote (overview first) with
their age, sources and state, opens one as rendered Markdown with the source versions it was
written from, searches them, says how to build a wiki when there is none, and speaks Chinese.

``hearth serve`` runs for real; the pages are files in the spec's format, written as
``hearth wiki build`` writes them (tests/server/wiki_pages.py).
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)
from tests.server.test_page_phone import PHONE, assert_no_sideways_scroll
from tests.server.wiki_pages import file_sha, small_wiki
from workhearth.config import load_config

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    served = start_serve(tmp_path)
    yield served
    stop_serve(served)


def three_days_ago() -> str:
    when = dt.datetime.now(dt.UTC) - dt.timedelta(days=3, hours=1)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def build_wiki(bench: Workbench) -> None:
    config = load_config({"HEARTH_HOME": str(bench.home)})
    small_wiki(config, bench.workspace, written=three_days_ago())


def item(page: Any, name: str) -> Any:
    return page.locator(f'#wiki-list a.wiki-item[data-page="{name}"]')


def test_no_wiki_yet_says_how_to_build_one(bench: Workbench, open_page: Callable[..., Any]) -> None:
    expect = sync_api.expect
    page = open_page(bench)
    page.goto(f"{bench.base}/#/wiki")
    empty = page.locator("#wiki-empty")
    expect(empty).to_contain_text("No wiki yet")
    expect(empty.locator("code")).to_have_text("hearth wiki build")
    expect(page.locator("#wiki-layout")).to_be_hidden()
    expect(page.locator('.nav a[data-view="wiki"]')).to_have_attribute("aria-current", "page")

    build_wiki(bench)  # the next visit shows the pages
    page.goto(f"{bench.base}/#/memory")
    page.goto(f"{bench.base}/#/wiki")
    expect(page.locator("#wiki-list li")).to_have_count(4)
    expect(page.locator("#wiki-empty")).to_have_count(0)


def test_pages_listed_one_opened_with_its_sources_and_a_search_finds_a_page(
    bench: Workbench, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    build_wiki(bench)
    page = open_page(bench)
    page.goto(f"{bench.base}/#/wiki")

    # The list: overview first, each with its age and number of sources, state as badges.
    links = page.locator("#wiki-list a.wiki-item")
    expect(links).to_have_count(4)
    expect(links.first).to_have_attribute("data-page", "overview")
    expect(page.locator("#wiki-summary")).to_have_text("4 pages")
    expect(item(page, "docs")).to_contain_text("written 3 days ago · 2 sources · 1 unreadable")
    expect(item(page, "docs").locator(".badge")).to_have_text(["update waiting", "edited"])
    expect(item(page, "src-billing").locator(".badge")).to_have_text(["sources changed"])
    expect(item(page, "notes").locator(".badge")).to_have_text(["edited"])
    # The overview is written from the pages (no record of which yet): its words say so.
    expect(item(page, "overview").locator(".badge")).to_have_text(["pages changed"])

    # The overview opens first: its Markdown rendered (a table), its links to pages in the view.
    article = page.locator("#wiki-page")
    expect(article.locator(".wiki-title")).to_have_text("Overview")
    expect(item(page, "overview")).to_have_attribute("aria-current", "page")
    expect(article.locator(".wiki-body table td").first).to_have_text("Invoices")
    expect(article.locator(".wiki-body")).to_contain_text("Invoices are in src/billing;")
    links_in_body = article.locator(".wiki-body a")
    expect(links_in_body).to_have_count(2)
    assert [links_in_body.nth(i).get_attribute("href") for i in range(2)] == [
        "#/wiki/src-billing",
        "#/wiki/docs",
    ]
    assert links_in_body.first.get_attribute("target") is None

    # One page opened (from the overview's link): its body, its sources with short hashes,
    # the unreadable one and why.
    article.get_by_role("link", name="docs").click()
    expect(page).to_have_url(re.compile(r"#/wiki/docs$"))
    expect(article.locator(".wiki-title")).to_have_text("docs")
    expect(article.locator(".wiki-body")).to_contain_text("a refund reverses an invoice")
    expect(article.locator(".wiki-page-head")).to_contain_text(
        "Written 3 days ago by openai:qwen-plus"
    )
    sha = file_sha(bench.workspace, "docs/guide.md")
    rows = article.locator(".wiki-source-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first.locator("td").first).to_have_text("docs/guide.md")
    expect(rows.first.locator("code.wiki-hash")).to_have_text(sha[:12])
    expect(rows.first.locator("code.wiki-hash")).to_have_attribute("title", sha)
    expect(article.locator(".wiki-unreadable li")).to_have_text(
        re.compile(r"docs/scan\.pdf\s*not a PDF \(no %PDF header\)")
    )
    expect(article.locator(".wiki-note-update")).to_contain_text("docs.update.md")

    # A stale page says so; hearth's own "## Sources" list is shown once, as the table.
    page.goto(f"{bench.base}/#/wiki/src-billing")
    expect(article.locator(".wiki-title")).to_have_text("src/billing")
    expect(article.locator(".wiki-note-stale")).to_contain_text("hearth wiki update")
    expect(article.locator(".wiki-body")).to_contain_text("sums an invoice's lines")
    expect(article.locator(".wiki-body")).not_to_contain_text("Sources")
    expect(article.locator(".wiki-source-table tbody tr td").first).to_have_text(
        "src/billing/invoice.py"
    )

    # The page the user wrote: said to be kept; its HTML shown as text, never run.
    item(page, "notes").click()
    expect(article.locator(".wiki-note")).to_have_text(
        "You edited this page; hearth keeps your edit when it updates the wiki."
    )
    expect(article.locator(".wiki-body")).to_contain_text("payroll runs on Fridays")
    assert article.locator(".wiki-body img, .wiki-body script").count() == 0
    assert page.evaluate("window.pwned") is None

    # A search finds a page by a word of its body; a result opens the page.
    search = page.locator("#wiki-search")
    search.fill("refunds")
    found = page.locator("#wiki-list a.wiki-hit")
    expect(found.first).to_be_visible()
    expect(page.locator("#wiki-summary")).to_have_text(re.compile(r"^\d pages? found$"))
    docs_hit = page.locator('#wiki-list a.wiki-hit[data-page="docs"]')
    expect(docs_hit).to_contain_text("refund reverses an invoice")
    docs_hit.click()
    expect(article.locator(".wiki-title")).to_have_text("docs")
    expect(docs_hit).to_have_attribute("aria-current", "page")  # the results stay
    search.fill("quantum")
    expect(page.locator("#wiki-summary")).to_have_text("No page mentions that.")
    expect(page.locator("#wiki-list li")).to_have_count(0)
    search.press("Escape")
    expect(page.locator("#wiki-list a.wiki-item")).to_have_count(4)
    page.mouse.move(0, 0)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "workbench-wiki.png"), full_page=True)

    # At phone width the list stacks above the page, and nothing scrolls sideways.
    page.set_viewport_size(PHONE)
    expect(article.locator(".wiki-title")).to_have_text("docs")
    assert_no_sideways_scroll(page, "wiki")
    side, body = page.locator(".wiki-side").bounding_box(), article.bounding_box()
    assert side["y"] + side["height"] <= body["y"], (side, body)
    page.screenshot(path=str(ARTIFACTS / "workbench-wiki-phone.png"), full_page=True)
    page.evaluate("window.scrollTo(0, 0)")
    item(page, "src-billing").click()  # a page picked in the list is scrolled to
    expect(article.locator(".wiki-title")).to_have_text("src/billing")
    expect(article.locator(".wiki-title")).to_be_in_viewport()
    assert page.evaluate("window.scrollY") > 0
    page.set_viewport_size({"width": 1280, "height": 860})

    # An unknown page is said in words, the list still there.
    page.goto(f"{bench.base}/#/wiki/payroll")
    expect(article.locator(".form-error")).to_contain_text("This wiki page does not exist")
    expect(page.locator("#wiki-list a.wiki-item")).to_have_count(4)


def test_the_chinese_page_words_the_wiki(bench: Workbench, open_page: Callable[..., Any]) -> None:
    expect = sync_api.expect
    build_wiki(bench)
    page = open_page(bench, locale="zh-CN")
    page.goto(f"{bench.base}/#/wiki/docs")
    expect(page.locator('.nav a[data-view="wiki"]')).to_have_text("Wiki")
    expect(page.locator("#wiki-summary")).to_have_text("共 4 页")
    expect(item(page, "docs")).to_contain_text("3天前生成 · 2 个来源 · 1 个无法读取")
    expect(item(page, "src-billing").locator(".badge")).to_have_text(["来源已变"])
    expect(item(page, "docs").locator(".badge")).to_have_text(["有待合并的更新", "已修改"])
    expect(item(page, "notes").locator(".badge")).to_have_text(["已修改"])
    article = page.locator("#wiki-page")
    expect(article.locator(".wiki-sources summary")).to_have_text("来源（2）")
    expect(article.locator(".wiki-unreadable-title")).to_have_text("无法读取")
    expect(article.locator(".wiki-page-head")).to_contain_text("由 openai:qwen-plus 生成")
    expect(page.locator("#wiki-search")).to_have_attribute("placeholder", "搜索 wiki…")
    page.locator("#wiki-search").fill("退款")
    expect(page.locator("#wiki-summary")).to_have_text("找到 1 页")
    expect(page.locator("#wiki-list a.wiki-hit")).to_contain_text("退款会冲销一张发票")
    page.screenshot(path=str(ARTIFACTS / "workbench-wiki-zh.png"), full_page=True)
    page.locator("#wiki-search").fill("quantum")
    expect(page.locator("#wiki-summary")).to_have_text("没有页面提到这些词。")
    page.goto(f"{bench.base}/#/wiki/payroll")
    expect(article.locator(".form-error")).to_contain_text("没有这个 wiki 页面")

    # The language switch re-words the open view at once.
    page.goto(f"{bench.base}/#/wiki/docs")
    page.locator("#lang-select").select_option("en")
    expect(page.locator("#wiki-summary")).to_have_text("4 pages")
    expect(article.locator(".wiki-sources summary")).to_have_text("Sources (2)")
