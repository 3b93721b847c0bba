// Memory panel: list (newest first, paged), search, add, edit, delete with a real undo, copy prompt.
import { api, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { counted, errorText } from "./errors.js";
import { t } from "./i18n.js";
import { ago, errorToast, searchBox, toast } from "./ui.js";

const PAGE = 20;
// Why: the undo toast must be gone before the delete is sent, so an Undo click can
// never race the request; the gap is the time a click takes to land. The toast stays
// while it is hovered or focused, and the delete waits for it.
export const UNDO_MS = 5000;
export const TOAST_MS = 4000;
const UNDO_KEEP = 20;
const REFRESH_MS = 20000;

const state = {
  section: null,
  entries: [],
  nextCursor: null,
  query: "",
  hits: null,
  editing: null,
  editText: null,
  draft: null,
  loaded: false,
  error: "",
};
// id -> {timer, toast}: rows deleted in the page whose DELETE has not been sent yet.
const pending = new Map();
// Ids deleted in this page, oldest first: Ctrl+Z takes back the newest, pending or sent
// (a sent delete comes back through POST /v1/memory/{id}/restore).
const undoable = [];
// Why: Ctrl+Z inside a text field is the field's own undo, unless the delete was the
// last thing done (focus lands in the search box after a delete).
let deleteWasLast = false;
let refreshTimer = null;

// ------------------------------------------------------------------ deletes
function commit(id, { keepalive = false } = {}) {
  const item = pending.get(id);
  if (!item) return;
  clearTimeout(item.timer);
  item.toast.dismiss();
  pending.delete(id);
  const forget = () => {
    state.entries = state.entries.filter((e) => e.id !== id);
    if (state.hits) state.hits = state.hits.filter((e) => e.id !== id);
  };
  api(`/v1/memory/${q(id)}`, { method: "DELETE", keepalive })
    .then(forget)
    .catch((err) => {
      if (err.status === 404) {
        forgetUndo(id);
        return forget();
      }
      forgetUndo(id);
      errorToast(err);
      render();
    });
}

/** Leaving the page sends every pending delete now (keepalive survives the unload). */
export function commitAll() {
  for (const id of [...pending.keys()]) commit(id, { keepalive: true });
}

function remove(id) {
  if (pending.has(id)) return;
  const item = { timer: null, toast: null };
  item.toast = toast(t("memory.deleted"), {
    action: { label: t("memory.undo"), fn: () => undo(id) },
    duration: TOAST_MS,
    onExpire: () => {
      item.timer = setTimeout(() => commit(id), UNDO_MS - TOAST_MS);
    },
  });
  pending.set(id, item);
  forgetUndo(id);
  undoable.push(id);
  if (undoable.length > UNDO_KEEP) undoable.shift();
  render();
  focusToolbar();
  deleteWasLast = true;
}

function forgetUndo(id) {
  const i = undoable.indexOf(id);
  if (i >= 0) undoable.splice(i, 1);
}

function undo(id) {
  const item = pending.get(id);
  if (!item) return;
  clearTimeout(item.timer);
  item.toast.dismiss();
  pending.delete(id);
  forgetUndo(id);
  render();
  focusToolbar();
}

/** Ctrl+Z: the newest delete comes back, whether its DELETE was sent or not. */
async function undoLast() {
  const id = undoable.pop();
  if (!id) return;
  if (pending.has(id)) undo(id);
  else {
    try {
      const entry = await api(`/v1/memory/${q(id)}/restore`, { method: "POST" });
      state.entries = [entry, ...state.entries.filter((e) => e.id !== entry.id)];
      render();
      focusToolbar();
    } catch (err) {
      errorToast(err);
      return;
    }
  }
  toast(t("memory.undone"));
  deleteWasLast = undoable.length > 0;
}

function typing(el) {
  if (!el || el === document.body) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  return el.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "reset"].includes(el.type);
}

function onKey(ev) {
  if (!(ev.ctrlKey || ev.metaKey) || ev.shiftKey || ev.altKey || ev.key.toLowerCase() !== "z") return;
  if (!state.section || state.section.hidden || !undoable.length) return;
  if (typing(ev.target) && !deleteWasLast) return;
  ev.preventDefault();
  undoLast();
}

function focusToolbar() {
  const target = state.section && $("#memory-search", state.section);
  if (target) target.focus();
}

// ------------------------------------------------------------------ loading
async function loadFirstPage() {
  try {
    const data = await api(`/v1/memory?limit=${PAGE}`);
    state.entries = data.entries || [];
    state.nextCursor = data.next_cursor || null;
    state.error = "";
  } catch (err) {
    state.error = errorText(err);
  }
  state.loaded = true;
}

async function loadMore() {
  if (!state.nextCursor) return;
  try {
    const data = await api(`/v1/memory?limit=${PAGE}&cursor=${q(state.nextCursor)}`);
    const seen = new Set(state.entries.map((e) => e.id));
    state.entries.push(...(data.entries || []).filter((e) => !seen.has(e.id)));
    state.nextCursor = data.next_cursor || null;
  } catch (err) {
    errorToast(err);
  }
  render();
}

function hitText(hit) {
  // Why: a hit is the Markdown line; its bullet and the trailing ^id anchor are storage, not content.
  return String(hit.text || "")
    .replace(/\s*\^[A-Za-z0-9-]+\s*$/, "")
    .replace(/^\s*[-*]\s+/, "");
}

async function runSearch() {
  const query = state.query.trim();
  if (!query) {
    state.hits = null;
    render();
    return;
  }
  try {
    const data = await api(`/v1/memory/search?q=${q(query)}&limit=${PAGE}`);
    if (state.query.trim() !== query) return;
    state.hits = (data.results || []).map((hit) => ({
      id: hit.entry_id,
      content: hitText(hit),
      level: hit.level,
      tags: hit.tags || [],
      layer: hit.layer,
      path: hit.path,
      line: hit.line_start,
    }));
  } catch (err) {
    errorToast(err);
    state.hits = [];
  }
  render();
}

async function refresh() {
  if (state.editing) return;
  await loadFirstPage();
  if (state.query.trim()) await runSearch();
  else render();
}

// ------------------------------------------------------------------ actions
async function copyPrompt(entry) {
  const text = t("memory.promptText", { content: entry.content });
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Why: the Clipboard API needs focus and permission; fall back to a selected textarea.
    const area = h("textarea", { class: "visually-hidden", "aria-hidden": "true" });
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  toast(t("memory.copied"));
}

async function saveEdit(entry, area, errorBox) {
  try {
    const updated = await api(`/v1/memory/${q(entry.id)}`, { method: "PATCH", body: { content: area.value } });
    state.editing = null;
    state.editText = null;
    for (const list of [state.entries, state.hits || []]) {
      const i = list.findIndex((e) => e.id === entry.id);
      if (i >= 0) list[i] = { ...list[i], ...updated };
    }
    render();
    toast(t("memory.saved"));
    const row = state.section.querySelector(`[data-id="${CSS.escape(entry.id)}"] .btn-edit`);
    if (row) row.focus();
  } catch (err) {
    errorBox.textContent = errorText(err);
  }
}

async function addEntry(form) {
  const content = form.elements.content.value;
  const tags = form.elements.tags.value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const body = { content, level: form.elements.level.value, tags, redact: form.elements.redact.checked };
  const errorBox = $(".form-error", form);
  errorBox.textContent = "";
  let status = 0;
  try {
    // Why the status: the same sentence saved again is a 200 with the entry that exists.
    const entry = await api("/v1/memory", { method: "POST", body, onStatus: (code) => (status = code) });
    state.entries = [entry, ...state.entries.filter((e) => e.id !== entry.id)];
    state.draft = null;
    form.reset();
    form.hidden = true;
    render();
    toast(t(status === 200 ? "memory.alreadySaved" : "memory.saved"));
    focusToolbar();
  } catch (err) {
    errorBox.textContent = errorText(err);
  }
}

// ------------------------------------------------------------------ rendering
function row(entry) {
  const editing = state.editing === entry.id;
  const canChange = Boolean(entry.id);
  const meta = h(
    "div",
    { class: "meta" },
    h("span", { class: `badge badge-level-${entry.level || "normal"}`, text: t(`level.${entry.level || "normal"}`) }),
    (entry.tags || []).map((tag) => h("span", { class: "chip", text: `#${tag}` })),
    h("span", { class: "muted", text: `${entry.path || ""}${entry.line ? `:${entry.line}` : ""}` }),
    entry.updated ? h("span", { class: "muted", text: ago(entry.updated) }) : null,
  );
  let body;
  if (editing) {
    const errorBox = h("p", { class: "form-error", role: "alert" });
    const area = h("textarea", { class: "input", rows: 4, "aria-label": t("memory.editLabel") });
    // Why editText: a language switch redraws the view; what is being typed stays.
    area.value = state.editText ?? entry.content;
    area.addEventListener("input", () => (state.editText = area.value));
    const cancel = () => {
      state.editing = null;
      state.editText = null;
      render();
      const again = state.section.querySelector(`[data-id="${CSS.escape(entry.id)}"] .btn-edit`);
      if (again) again.focus();
    };
    area.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") cancel();
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) saveEdit(entry, area, errorBox);
    });
    body = h(
      "div",
      { class: "edit" },
      area,
      errorBox,
      h(
        "div",
        { class: "actions" },
        h("button", {
          type: "button",
          class: "btn btn-primary btn-save",
          text: t("action.save"),
          on: { click: () => saveEdit(entry, area, errorBox) },
        }),
        h("button", { type: "button", class: "btn", text: t("action.cancel"), on: { click: cancel } }),
        h("span", { class: "muted small", text: t("memory.editHint") }),
      ),
    );
    setTimeout(() => area.focus(), 0);
  } else {
    body = h("p", { class: "memory-content", text: entry.content });
  }
  const short = entry.content.length > 40 ? `${entry.content.slice(0, 40)}…` : entry.content;
  const actions = editing
    ? null
    : h(
        "div",
        { class: "actions" },
        canChange &&
          h("button", {
            type: "button",
            class: "btn btn-ghost btn-edit",
            text: t("action.edit"),
            "aria-label": `${t("action.edit")}: ${short}`,
            on: {
              click: () => {
                state.editing = entry.id;
                state.editText = null;
                render();
              },
            },
          }),
        h("button", {
          type: "button",
          class: "btn btn-ghost btn-copy",
          text: t("memory.copyPrompt"),
          "aria-label": `${t("memory.copyPrompt")}: ${short}`,
          on: { click: () => copyPrompt(entry) },
        }),
        canChange &&
          h("button", {
            type: "button",
            class: "btn btn-ghost btn-danger btn-delete",
            text: t("action.delete"),
            "aria-label": `${t("action.delete")}: ${short}`,
            on: { click: () => remove(entry.id) },
          }),
      );
  return h("li", { class: "card memory-row", "data-id": entry.id || "" }, body, meta, actions);
}

function render() {
  const list = state.section && $("#memory-list", state.section);
  if (!list) return;
  clear(list);
  const searching = state.hits !== null;
  const items = (searching ? state.hits : state.entries).filter((e) => !pending.has(e.id));
  for (const entry of items) list.appendChild(row(entry));
  const summary = $("#memory-summary", state.section);
  if (state.error) summary.textContent = t("error.prefix", { detail: state.error });
  else if (searching) summary.textContent = items.length ? counted("memory.results", items.length) : t("memory.noResults");
  else if (state.loaded && !items.length) summary.textContent = t("memory.empty");
  else summary.textContent = "";
  $("#memory-more", state.section).hidden = searching || !state.nextCursor;
}

function build(section) {
  clear(section);
  const { box: search } = searchBox(
    { id: "memory-search", placeholder: t("memory.searchPlaceholder"), "aria-label": t("memory.searchLabel"), value: state.query },
    { onQuery: (text) => (state.query = text), run: runSearch },
  );
  const form = h(
    "form",
    { id: "memory-new", class: "card form", hidden: true, "aria-label": t("memory.new") },
    h("label", { class: "field" }, h("span", { text: t("memory.content") }), h("textarea", { name: "content", class: "input", rows: 3, required: true })),
    h(
      "div",
      { class: "row" },
      h(
        "label",
        { class: "field" },
        h("span", { text: t("memory.level") }),
        h(
          "select",
          { name: "level", class: "input" },
          ["normal", "critical", "low"].map((lv) => h("option", { value: lv, text: t(`level.${lv}`) })),
        ),
      ),
      h("label", { class: "field grow" }, h("span", { text: t("memory.tags") }), h("input", { name: "tags", class: "input", placeholder: t("memory.tagsPlaceholder") })),
    ),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "redact" }), h("span", { text: t("memory.redact") })),
    h("p", { class: "form-error", role: "alert" }),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "btn btn-primary", text: t("action.save") }),
      h("button", { type: "button", class: "btn btn-cancel", text: t("action.cancel") }),
    ),
  );
  const closeForm = () => {
    form.hidden = true;
    state.draft = null;
    $("#memory-add", section).focus();
  };
  // Why: a language switch rebuilds the view; an open form keeps what was typed in it.
  const keepDraft = () => {
    const el = form.elements;
    state.draft = { content: el.content.value, level: el.level.value, tags: el.tags.value, redact: el.redact.checked };
  };
  form.addEventListener("input", keepDraft);
  form.addEventListener("change", keepDraft);
  if (state.draft) {
    form.hidden = false;
    form.elements.content.value = state.draft.content;
    form.elements.level.value = state.draft.level;
    form.elements.tags.value = state.draft.tags;
    form.elements.redact.checked = state.draft.redact;
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    addEntry(form);
  });
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") closeForm();
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit();
  });
  $(".btn-cancel", form).addEventListener("click", closeForm);
  section.append(
    h(
      "div",
      { id: "memory-toolbar", class: "toolbar", role: "group", "aria-label": t("memory.toolbar") },
      search,
      h("button", {
        id: "memory-add",
        type: "button",
        class: "btn btn-primary",
        text: t("memory.new"),
        on: {
          click: () => {
            form.hidden = false;
            keepDraft();
            form.elements.content.focus();
          },
        },
      }),
      h("button", { id: "memory-refresh", type: "button", class: "btn", text: t("action.refresh"), on: { click: refresh } }),
    ),
    form,
    h("p", { id: "memory-summary", class: "muted", "aria-live": "polite" }),
    h("ul", { id: "memory-list", class: "list", "aria-label": t("nav.memory") }),
    h("button", { id: "memory-more", type: "button", class: "btn", text: t("action.loadMore"), hidden: true, on: { click: loadMore } }),
  );
}

export function show(section) {
  state.section = section;
  build(section);
  render();
  refresh();
  clearInterval(refreshTimer);
  refreshTimer = setInterval(() => {
    if (document.visibilityState === "visible") refresh();
  }, REFRESH_MS);
}

export function hide() {
  clearInterval(refreshTimer);
  refreshTimer = null;
}

// Why: closing the tab or navigating away during the undo window still deletes.
window.addEventListener("pagehide", commitAll);
document.addEventListener("keydown", onKey);
document.addEventListener("input", () => (deleteWasLast = false), true);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") commitAll();
  else if (refreshTimer) refresh();
});
