// The wiki view (issue 24): the pages hearth wrote about this workspace (overview first) with
// their age, sources and state; one page's Markdown with the source versions it was written
// from; a search over the pages. The pages are read only here: `hearth wiki build` writes them.
import { api, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { counted, errorText } from "./errors.js";
import { getLang, t } from "./i18n.js";
import { renderMarkdownInto } from "./markdown.js";
import { ago, searchBox, when } from "./ui.js";

const SEARCH_LIMIT = 20;
const HASH_SHOWN = 12;
// Why: a page citing a whole folder lists hundreds of files; the list opens by itself only when short.
const SOURCES_OPEN_MAX = 12;
// Why a reserved host (RFC 2606): the Markdown renderer keeps web links only; a link to another
// page goes through it as this, and becomes a link inside the view once rendered.
const PAGE_LINK = "https://wiki.invalid/";
const MD_LINK = /(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"\n]*")?\s*\)/g;

const state = { section: null, lang: "", pages: [], opened: null, hits: null, query: "" };
let cancelSearch = () => {};
let asked = 0; // Why: the newest page asked for wins when answers come back out of order.

// ------------------------------------------------------------------ words
function writtenSeconds(page) {
  const ms = Date.parse(page.written || "");
  return Number.isNaN(ms) ? 0 : ms / 1000;
}

// Why two words for stale: the overview is written from the other pages, not from files.
function staleKey(page) {
  return page.name === "overview" ? "wiki.staleOverview" : "wiki.stale";
}

function badges(page) {
  const out = [];
  if (page.stale) out.push(h("span", { class: "badge badge-wiki-stale", title: t(`${staleKey(page)}Hint`), text: t(staleKey(page)) }));
  if (page.update_waiting) out.push(h("span", { class: "badge badge-wiki-update", title: t("wiki.updateHint"), text: t("wiki.update") }));
  if (page.edited) out.push(h("span", { class: "badge badge-wiki-edited", title: t("wiki.editedHint"), text: t("wiki.edited") }));
  return out;
}

/** "written 3 days ago · 2 sources · 1 unreadable", each part kept on one line. */
function ageLine(page) {
  const seconds = writtenSeconds(page);
  const parts = [];
  if (seconds) parts.push(t("wiki.written", { ago: ago(seconds) }));
  // Why not "0 sources": the overview is written from pages, a page of the user's from nothing.
  if ((page.sources || []).length) parts.push(counted("wiki.sources", page.sources.length));
  if ((page.unreadable || []).length) parts.push(counted("wiki.unreadableCount", page.unreadable.length));
  return parts.flatMap((part, i) => [i ? " · " : null, h("span", { class: "nowrap", text: part })]);
}

/** A hit's page: memory names a wiki chunk by its file, ``wiki/<name>.md``. */
function hitPage(hit) {
  const file = String(hit.path || "").split("/").pop();
  return file.endsWith(".md") ? file.slice(0, -3) : file;
}

/** The body as the page shows it: without the title line (shown above it) and without the
 * trailing "## Sources" list hearth writes (shown below it, with the versions). */
export function bodyOf(text, title) {
  let body = String(text || "");
  const first = /^\s*# (.*)\n?/.exec(body);
  if (first && first[1].trim() === String(title || "").trim()) body = body.slice(first[0].length);
  const sources = /\n## Sources[ \t]*\n((?:[ \t]*(?:[-*] .*)?\n?)*)$/.exec(body);
  if (sources) body = body.slice(0, sources.index);
  return body;
}

/** Links to other pages (``name.md``) made page links; links to files (``file://``, relative
 * paths: nothing the browser could open) left as their words. Web links and images stay. */
export function linkPages(markdown, names) {
  return markdown.replace(MD_LINK, (all, bang, text, target) => {
    if (bang || /^(?:https?|mailto):/i.test(target)) return all;
    const page = /^(?:\.\/)?([a-z0-9][a-z0-9-]*)\.md(?:#.*)?$/.exec(target);
    if (page && names.has(page[1])) return `[${text}](${PAGE_LINK}${page[1]})`;
    return text;
  });
}

function renderBody(page) {
  const names = new Set(state.pages.map((p) => p.name));
  const box = renderMarkdownInto(h("div", { class: "msg-text wiki-body" }), linkPages(bodyOf(page.text, page.title), names));
  for (const a of box.querySelectorAll(`a[href^="${PAGE_LINK}"]`)) {
    a.setAttribute("href", `#/wiki/${encodeURIComponent(a.getAttribute("href").slice(PAGE_LINK.length))}`);
    a.removeAttribute("target");
    a.removeAttribute("rel");
    a.classList.add("wiki-link");
  }
  return box;
}

// ------------------------------------------------------------------ the list
function pageLink(page) {
  return h(
    "a",
    { class: "wiki-item", href: `#/wiki/${encodeURIComponent(page.name)}`, "data-page": page.name },
    h("span", { class: "wiki-item-title", text: page.title || page.name }),
    page.name === "overview" ? h("span", { class: "chip", text: t("wiki.overview") }) : null,
    h("span", { class: "wiki-item-meta muted small" }, ageLine(page)),
    badges(page).length ? h("span", { class: "wiki-badges" }, badges(page)) : null,
  );
}

/** A hit's words without Markdown marks, and without its heading (the page's title is above). */
function snippet(text) {
  const lines = String(text || "").split("\n");
  const words = lines.filter((line) => !/^\s*#/.test(line)).join(" ") || lines.join(" ");
  return words.replace(/[#*`>_|]+/g, " ").replace(/\s+/g, " ").trim();
}

function hitLink(name, hit) {
  const page = state.pages.find((p) => p.name === name);
  return h(
    "a",
    { class: "wiki-item wiki-hit", href: `#/wiki/${encodeURIComponent(name)}`, "data-page": name },
    h("span", { class: "wiki-item-title", text: page?.title || name }),
    h("span", { class: "wiki-snippet small", text: snippet(hit.text) }),
  );
}

function renderList() {
  const list = $("#wiki-list", state.section);
  const summary = $("#wiki-summary", state.section);
  clear(list);
  if (state.hits !== null) {
    // Why one row per page: a page found by several of its chunks is still one place to go.
    const best = new Map();
    for (const hit of state.hits) if (!best.has(hitPage(hit))) best.set(hitPage(hit), hit);
    summary.textContent = best.size ? counted("wiki.results", best.size) : t("wiki.noResults");
    for (const [name, hit] of best) list.append(h("li", {}, hitLink(name, hit)));
  } else {
    summary.textContent = counted("wiki.count", state.pages.length);
    for (const page of state.pages) list.append(h("li", {}, pageLink(page)));
  }
  markOpened();
}

function markOpened() {
  for (const link of state.section.querySelectorAll(".wiki-item")) {
    if (link.dataset.page === state.opened) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function runSearch() {
  const query = state.query.trim();
  if (!query) {
    state.hits = null;
    renderList();
    return;
  }
  try {
    const data = await api(`/v1/wiki/search?q=${q(query)}&limit=${SEARCH_LIMIT}`);
    if (query !== state.query.trim()) return;
    state.hits = data.results || [];
  } catch (err) {
    state.hits = [];
    renderList();
    $("#wiki-summary", state.section).textContent = errorText(err);
    return;
  }
  renderList();
}

// ------------------------------------------------------------------ one page
function sourcesBox(page) {
  const sources = page.sources || [];
  const unreadable = page.unreadable || [];
  const box = h("section", { class: "wiki-sources", "aria-label": t("wiki.sourcesTitle") });
  const rows = sources.map((s) =>
    h("tr", {}, h("td", {}, h("code", { text: s.path })), h("td", {}, h("code", { class: "wiki-hash", title: s.sha256, text: String(s.sha256 || "").slice(0, HASH_SHOWN) }))),
  );
  box.append(
    h(
      "details",
      { open: sources.length <= SOURCES_OPEN_MAX },
      h("summary", {}, h("h3", { text: counted("wiki.sourcesOf", sources.length) })),
      sources.length
        ? h(
            "div",
            { class: "table-wrap" },
            h("table", { class: "table wiki-source-table" }, h("thead", {}, h("tr", {}, h("th", { text: t("wiki.file") }), h("th", { text: t("wiki.version") }))), h("tbody", {}, rows)),
          )
        : h("p", { class: "muted small", text: t("wiki.noSources") }),
    ),
  );
  if (unreadable.length) {
    box.append(
      h("h3", { class: "wiki-unreadable-title", text: t("wiki.unreadable") }),
      h("p", { class: "muted small", text: t("wiki.unreadableHint") }),
      h("ul", { class: "wiki-unreadable" }, unreadable.map((u) => h("li", {}, h("code", { text: u.path }), h("span", { text: u.reason })))),
    );
  }
  return box;
}

function notes(page) {
  const out = [];
  if (page.stale) out.push(h("p", { class: "wiki-note wiki-note-stale", text: t(`${staleKey(page)}Note`) }));
  // Why one or the other: the waiting update's note already says the edit was kept.
  if (page.update_waiting) {
    out.push(h("p", { class: "wiki-note wiki-note-update", text: t("wiki.updateNote", { file: `${page.name}.update.md` }) }));
  } else if (page.edited) {
    out.push(h("p", { class: "wiki-note", text: t("wiki.editedNote") }));
  }
  return out;
}

function renderPage(page) {
  const box = $("#wiki-page", state.section);
  clear(box);
  const seconds = writtenSeconds(page);
  const meta = [];
  if (seconds) meta.push(h("span", { title: when(seconds), text: t("wiki.writtenBy", { ago: ago(seconds), model: page.model || "?" }) }));
  box.append(
    h(
      "header",
      { class: "wiki-page-head" },
      h("h2", { class: "wiki-title", text: page.title || page.name }),
      h("div", { class: "meta muted" }, meta, h("span", { class: "chip mono", text: `${page.name}.md` }), badges(page)),
    ),
    ...notes(page),
    renderBody(page),
    sourcesBox(page),
  );
}

// Why: on a narrow screen the list stands above the page; a page picked there is scrolled to.
const NARROW = "(max-width: 760px)";

async function openPage(name, picked = false) {
  state.opened = name;
  markOpened();
  const box = $("#wiki-page", state.section);
  if (!name) {
    clear(box);
    return;
  }
  const ticket = ++asked;
  box.setAttribute("aria-busy", "true");
  try {
    const page = await api(`/v1/wiki/${q(name)}`);
    if (ticket !== asked) return;
    renderPage(page);
    if (picked && window.matchMedia(NARROW).matches) box.scrollIntoView({ block: "start" });
  } catch (err) {
    if (ticket !== asked) return;
    clear(box);
    box.append(h("p", { class: "form-error", role: "alert", text: errorText(err) }));
  } finally {
    if (ticket === asked) box.removeAttribute("aria-busy");
  }
}

// ------------------------------------------------------------------ the view
function emptyState() {
  return h(
    "div",
    { class: "card wiki-empty", id: "wiki-empty" },
    h("h2", { text: t("wiki.emptyTitle") }),
    h("p", { text: t("wiki.emptyText") }),
    h("pre", { class: "code wiki-command" }, h("code", { text: "hearth wiki build" })),
    h("p", { class: "muted", text: t("wiki.emptyAfter") }),
  );
}

function build(section) {
  clear(section);
  state.section = section;
  state.lang = getLang();
  state.hits = null;
  state.query = "";
  const { box: search, cancel } = searchBox(
    { id: "wiki-search", placeholder: t("wiki.searchPlaceholder"), "aria-label": t("wiki.searchLabel") },
    { onQuery: (text) => (state.query = text), run: runSearch },
  );
  cancelSearch = cancel;
  section.append(
    h("p", { id: "wiki-loading", class: "muted", text: t("loading") }),
    h(
      "div",
      { class: "wiki", id: "wiki-layout", hidden: true },
      h(
        "nav",
        { class: "wiki-side", "aria-label": t("wiki.pages") },
        search,
        h("p", { id: "wiki-summary", class: "muted small", "aria-live": "polite" }),
        h("ul", { id: "wiki-list", class: "wiki-list" }),
      ),
      h("article", { id: "wiki-page", class: "card wiki-page", "aria-live": "polite" }),
    ),
  );
}

export async function show(section, arg) {
  if (state.section !== section || state.lang !== getLang() || !section.firstChild) build(section);
  let pages;
  try {
    pages = await api("/v1/wiki");
  } catch (err) {
    clear(section);
    state.section = null; // Why: the next visit builds the view again
    section.append(h("p", { class: "form-error", role: "alert", text: errorText(err) }));
    return;
  }
  state.pages = Array.isArray(pages) ? pages : [];
  $("#wiki-loading", section)?.remove();
  const layout = $("#wiki-layout", section);
  $("#wiki-empty", section)?.remove();
  if (!state.pages.length) {
    layout.hidden = true;
    section.append(emptyState());
    return;
  }
  layout.hidden = false;
  renderList();
  // Why the first page by default: the overview is where a reader starts.
  await openPage(arg || state.pages[0].name, Boolean(arg));
}

export function hide() {
  cancelSearch();
}
