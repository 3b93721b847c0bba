// Tasks: the list with status and last activity; one task's transcript, files, live stream.
import { api, listOf, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { counted, errorText, known, outcomeText } from "./errors.js";
import { t } from "./i18n.js";
import { turnsPanel } from "./rewind.js";
import { attach } from "./stream.js";
import { addTeamStart, teamPanel } from "./team.js";
import { renderAudit } from "./trash.js";
import { ago, errorToast, statusBadge, toast, when } from "./ui.js";

const LIST_REFRESH_MS = 5000;

let section = null;
let stream = null;
let listTimer = null;
let openId = null;

function stop() {
  stream?.close();
  stream = null;
  clearInterval(listTimer);
  listTimer = null;
}

// ------------------------------------------------------------------ list
async function renderList() {
  const table = $("#tasks-table tbody", section);
  if (!table) return;
  let sessions;
  try {
    sessions = listOf(await api("/v1/sessions?limit=30"), "sessions");
  } catch (err) {
    // Why: the view may have been left (and emptied) while the list loaded.
    if (!table.isConnected) return;
    $("#tasks-summary", section).textContent = t("error.prefix", { detail: errorText(err) });
    return;
  }
  if (!table.isConnected) return; // Why: the view changed while the list was loading.
  clear(table);
  $("#tasks-summary", section).textContent = sessions.length ? "" : t("tasks.empty");
  for (const s of sessions) {
    table.appendChild(
      h(
        "tr",
        { "data-id": s.session_id },
        h("td", {}, h("a", { href: `#/tasks/${q(s.session_id)}`, class: "task-link", text: s.title || s.session_id })),
        h("td", {}, statusBadge(s.status)),
        h("td", { class: "muted", title: when(s.updated), text: ago(s.updated) }),
        h("td", { class: "muted num", text: s.messages ?? "" }),
        h("td", { class: "muted ellipsis", title: s.workspace, text: s.workspace }),
      ),
    );
  }
}

function showList() {
  clear(section);
  section.append(
    h(
      "div",
      { class: "toolbar" },
      h("a", { class: "btn btn-primary", href: "#/chat", text: t("tasks.new") }),
      h("button", { type: "button", class: "btn", text: t("action.refresh"), on: { click: renderList } }),
    ),
    h("p", { id: "tasks-summary", class: "muted", "aria-live": "polite" }),
    h(
      "table",
      { id: "tasks-table", class: "table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["tasks.title", "tasks.status", "tasks.activity", "tasks.messages", "tasks.workspace"].map((k) => h("th", { scope: "col", text: t(k) })),
        ),
      ),
      h("tbody"),
    ),
  );
  addTeamStart($(".toolbar", section));
  renderList();
  listTimer = setInterval(() => {
    if (document.visibilityState === "visible") renderList();
  }, LIST_REFRESH_MS);
}

// ------------------------------------------------------------------ one task
function changeLabel(change) {
  if (change.entries != null) return counted("tasks.changeFolder", change.entries, { kind: t(`tasks.change.${change.kind}`) });
  return t(`tasks.change.${change.kind}`);
}

// Why: what changed on disk is measured by the server (GET /v1/sessions/{id}/changes),
// never guessed from the model's tool calls: a denied write changed nothing, a shell
// command may have changed many files.
async function renderFiles(box, id) {
  clear(box);
  let files;
  try {
    files = await api(`/v1/sessions/${q(id)}/changes`);
  } catch {
    files = {};
  }
  const changes = Array.isArray(files.changes) ? files.changes : [];
  // Why: the session's file history holds the version each write replaced; match by tool call.
  let versions = [];
  try {
    versions = listOf(await api(`/v1/trash?session=${q(id)}`), "versions", "items", "trash");
  } catch {
    versions = [];
  }
  if (!changes.length && !versions.length && !files.omitted && !files.untracked) return;
  // Why: a session recorded before changes were measured still offers its versions.
  const rows = changes.length ? changes : versions.map((v) => ({ path: v.original, kind: "modified", tool: "", call_id: v.call_id }));
  box.append(h("h3", { text: t("tasks.files") }));
  const list = h("ul", { class: "files" });
  for (const change of rows) {
    const version = change.kind !== "created" && versions.find((v) => v.call_id && v.call_id === change.call_id);
    list.appendChild(
      h(
        "li",
        { "data-kind": change.kind },
        h("code", { text: change.entries != null ? `${change.path}/` : change.path }),
        h("span", { class: `badge change-${change.kind}`, text: changeLabel(change) }),
        change.tool ? h("span", { class: "muted small", text: change.tool }) : null,
        version
          ? h("button", {
              type: "button",
              class: "btn btn-small btn-restore-version",
              text: t("tasks.restorePrevious"),
              "aria-label": `${t("tasks.restorePrevious")}: ${change.path}`,
              on: {
                click: async (ev) => {
                  ev.currentTarget.disabled = true;
                  try {
                    await api(`/v1/trash/${q(version.n)}/restore?session=${q(id)}`, { method: "POST" });
                    toast(t("trash.restored", { path: version.original || change.path }));
                  } catch (err) {
                    errorToast(err);
                  }
                  // Why: the restore kept what it replaced as a new version; list it.
                  renderFiles(box, id);
                },
              },
            })
          : null,
      ),
    );
  }
  box.append(list);
  if (files.omitted) box.append(h("p", { class: "muted small", text: counted("tasks.filesOmitted", files.omitted) }));
  if (files.untracked) box.append(h("p", { class: "muted small", text: t("tasks.filesUntracked") }));
}

// A problem in the page's language: by its code when the page knows it, else hearth's English.
function problemText(p) {
  const key = `check.problem.${p.code}`;
  if (!p.code || !known(key)) return p.message;
  return typeof p.params?.n === "number" ? counted(key, p.params.n, p.params) : t(key, p.params || {});
}

const WHERE = [
  [/^rendered page (\d+)$/, "where.renderedPage"],
  [/^page (\d+)$/, "where.page"],
  [/^slide (\d+)$/, "where.slide"],
  [/^table (\d+)$/, "where.table"],
  [/^round trip$/, "where.roundTrip"],
  [/^thumbnails$/, "where.thumbnails"],
  [/^glyphs$/, "where.glyphs"],
];

function whereText(where) {
  for (const [pattern, key] of WHERE) {
    const m = where.match(pattern);
    if (m) return t(`check.problem.${key}`, { n: m[1] });
  }
  return where; // a part name, a sheet or a cell: the file's own words
}

// Why (issue #21): hearth checked each office file the task produced, outside the
// model's reach; the latest receipt per file is what the user gets, with its pictures.
async function renderReceipts(box, id) {
  let receipts;
  try {
    receipts = await api(`/v1/sessions/${q(id)}/receipts`);
  } catch {
    receipts = [];
  }
  clear(box);
  const latest = new Map();
  for (const r of Array.isArray(receipts) ? receipts : []) latest.set(r.path, r);
  if (!latest.size) return;
  box.append(h("h3", { text: t("check.title") }));
  const list = h("ul", { class: "receipts" });
  for (const r of latest.values()) {
    const failing = r.problems.filter((p) => p.kind !== "skipped");
    const skipped = r.problems.filter((p) => p.kind === "skipped");
    const facts = [
      r.pages ? counted("check.pages", r.pages) : "",
      r.tracked_changes ? counted("check.changes", r.tracked_changes) : "",
      r.comments ? counted("check.comments", r.comments) : "",
    ].filter(Boolean);
    list.appendChild(
      h(
        "li",
        { class: `receipt ${r.ok ? "receipt-ok" : "receipt-fails"}`, "data-path": r.path },
        h(
          "div",
          { class: "receipt-head" },
          h("code", { text: r.path }),
          h("span", { class: `badge ${r.ok ? "badge-ok" : "badge-fails"}`, text: t(r.ok ? "check.ok" : "check.fails") }),
          facts.length ? h("span", { class: "muted small", text: facts.join(" · ") }) : null,
          r.path.startsWith("/")
            ? null
            : h("a", {
                class: "btn btn-small receipt-download",
                href: `/v1/files/content?path=${q(r.path)}`,
                download: r.path.split("/").pop(),
                text: t("check.download"),
              }),
        ),
        failing.length
          ? h(
              "ul",
              { class: "receipt-problems" },
              failing.map((p) =>
                h("li", {}, h("span", { class: "badge", text: t(`check.kind.${p.kind}`) }), " ", p.where ? h("code", { text: whereText(p.where) }) : null, " ", problemText(p)),
              ),
            )
          : null,
        skipped.length ? h("p", { class: "muted small", text: t("check.skipped", { what: skipped.map((p) => problemText(p)).join("; ") }) }) : null,
        r.thumbnails.length
          ? h(
              "div",
              { class: "receipt-thumbs" },
              r.thumbnails.map((src, i) => h("img", { src, loading: "lazy", alt: t("check.thumbnail", { n: i + 1, path: r.path }) })),
            )
          : null,
      ),
    );
  }
  box.append(list);
}

async function showTask(id) {
  clear(section);
  const status = h("span", { class: "task-status" });
  const controls = h("div", { class: "actions" });
  const thread = h("div", { class: "thread", "aria-label": t("tasks.transcript") });
  const files = h("div", { class: "files-box" });
  const produced = h("div", { class: "receipts-box" });
  const audit = h("div", { class: "audit-box", hidden: true });
  // Why a reload after a rewind: the thread and the files are the server's, as they are now.
  const turns = turnsPanel(id, { onRewound: () => follow() });
  const title = h("h2", { class: "task-title", text: id });
  // Why: a team task (issue #23) shows its questions, plan, board and report above the thread.
  const team = teamPanel(id, {
    onResumed: () => {
      setStatus("running");
      follow();
    },
  });
  section.append(
    h("a", { href: "#/tasks", class: "back", text: `← ${t("tasks.all")}` }),
    h("div", { class: "task-head" }, h("div", {}, title, h("div", { class: "muted small mono", text: id })), status, controls),
    team.el,
    thread,
    produced,
    files,
    turns.el,
    audit,
  );

  const setStatus = (value, reason) => {
    clear(status).append(statusBadge(value));
    team.setStatus(value);
    turns.setRunning(value === "running" || value === "waiting");
    if (value === "failed" && reason) status.append(h("div", { class: "task-reason", role: "alert", text: reason }));
    clear(controls);
    if (value === "running" || value === "waiting") {
      controls.append(
        h("button", {
          type: "button",
          class: "btn btn-danger btn-stop",
          text: t("tasks.stop"),
          on: {
            click: async () => {
              try {
                await api(`/v1/tasks/${q(id)}/stop`, { method: "POST" });
              } catch (err) {
                errorToast(err);
              }
            },
          },
        }),
      );
    } else if (value === "stopped" || value === "failed") {
      controls.append(
        h("button", {
          type: "button",
          class: "btn btn-primary btn-continue",
          text: t("tasks.continue"),
          on: {
            click: async () => {
              try {
                await api(`/v1/tasks/${q(id)}/resume`, { method: "POST" });
                setStatus("running");
                follow();
              } catch (err) {
                errorToast(err);
              }
            },
          },
        }),
      );
    }
    controls.append(
      h("button", {
        type: "button",
        class: "btn btn-audit",
        text: t("tasks.audit"),
        "aria-expanded": String(!audit.hidden),
        on: {
          click: (ev) => {
            audit.hidden = !audit.hidden;
            ev.currentTarget.setAttribute("aria-expanded", String(!audit.hidden));
            if (!audit.hidden) renderAudit(audit, id);
          },
        },
      }),
    );
  };

  // Why always the event stream: its first event says which run the server holds and
  // where the transcript ends before it; a finished session's stream is its status
  // and end at once, so one path shows every task, live or not, the same way.
  const follow = () => {
    stream?.close();
    stream = attach(id, thread, {
      onStatus: (value, reason) => setStatus(value, reason),
      onDone: (_reason, end) => {
        stream = null;
        setStatus(end?.status || "done", outcomeText(end));
        renderFiles(files, id);
        renderReceipts(produced, id);
      },
    });
  };

  setStatus("running");
  follow();
  try {
    const sessions = listOf(await api("/v1/sessions?limit=30"), "sessions");
    const info = sessions.find((s) => s.session_id === id);
    if (info?.title) title.textContent = info.title;
  } catch {
    // Why: the title is a nicety; the thread reports real errors.
  }
}

export function show(el, arg) {
  section = el;
  stop();
  openId = arg;
  if (arg) showTask(arg);
  else showList();
}

export function hide() {
  openId = null;
  stop();
  if (section) clear(section); // one thread in the page at a time
}

export function current() {
  return openId;
}
