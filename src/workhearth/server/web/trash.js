// Trash (restore a deleted file) and the audit trail of a task.
import { api, listOf, q } from "./api.js";
import { clear, h } from "./dom.js";
import { auditWords, errorText } from "./errors.js";
import { t } from "./i18n.js";
import { errorToast, toast, when } from "./ui.js";

function size(n) {
  if (n == null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}

async function renderTrash(box) {
  clear(box);
  let items;
  try {
    items = listOf(await api("/v1/trash"), "items", "trash");
  } catch (err) {
    box.append(h("p", { class: "form-error", text: t("error.prefix", { detail: errorText(err) }) }));
    return;
  }
  if (!items.length) {
    box.append(h("p", { class: "muted", text: t("trash.empty") }));
    return;
  }
  const body = h("tbody");
  for (const item of items) {
    body.appendChild(
      h(
        "tr",
        { "data-id": item.id },
        h("td", { class: "cell-main" }, h("code", { text: item.original })),
        h("td", { class: "muted", text: when(item.deleted_at) }),
        h("td", { class: "muted", text: item.reason || "" }),
        h("td", { class: "muted num", text: size(item.size) }),
        h(
          "td",
          { class: "cell-action" },
          h("button", {
            type: "button",
            class: "btn btn-small btn-restore",
            text: t("trash.restore"),
            "aria-label": `${t("trash.restore")}: ${item.original}`,
            on: {
              click: async () => {
                try {
                  await api(`/v1/trash/${q(item.id)}/restore`, { method: "POST" });
                  toast(t("trash.restored", { path: item.original }));
                  renderTrash(box);
                } catch (err) {
                  errorToast(err);
                }
              },
            },
          }),
        ),
      ),
    );
  }
  box.append(
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "table" },
        h("thead", {}, h("tr", {}, ["trash.file", "trash.deleted", "trash.reason", "trash.size", "trash.action"].map((k) => h("th", { scope: "col", text: t(k) })))),
        body,
      ),
    ),
  );
}

/** Task titles by session id, for the all-tasks audit (the newest tasks; others show their id). */
async function taskTitles() {
  try {
    const sessions = listOf(await api("/v1/sessions?limit=100"), "sessions");
    return new Map(sessions.map((s) => [s.session_id, s.title]));
  } catch {
    return new Map(); // Why: the column falls back to the session id.
  }
}

function taskCell(sessionId, titles) {
  if (!sessionId) return h("td", { class: "muted cell-task", text: "—" });
  // Why the tail: ids start with the date and time; the random part tells tasks apart.
  const title = titles.get(sessionId);
  const label = title || `…${sessionId.slice(-8)}`;
  return h("td", { class: "cell-task" }, h("a", { class: "task-link", href: `#/tasks/${q(sessionId)}`, title: title ? `${title}\n${sessionId}` : sessionId, text: label }));
}

/** A task's audit records: what each tool call was, who allowed it, how it ended.
 * Without ``sessionId`` (every task's records) a Task column links each row to its task. */
export async function renderAudit(box, sessionId) {
  clear(box);
  let records;
  let titles = null;
  try {
    const query = sessionId ? `session=${q(sessionId)}&limit=200` : "limit=200";
    records = listOf(await api(`/v1/audit?${query}`), "records", "audit", "entries");
    titles = sessionId ? null : await taskTitles();
  } catch (err) {
    box.append(h("p", { class: "form-error", text: t("error.prefix", { detail: errorText(err) }) }));
    return;
  }
  box.append(h("h3", { text: t("audit.title") }));
  if (!records.length) {
    box.append(h("p", { class: "muted", text: t("audit.empty") }));
    return;
  }
  const body = h("tbody");
  for (const r of records) {
    const words = auditWords(r);
    body.appendChild(
      h(
        "tr",
        {},
        h("td", { class: "muted nowrap", text: when(r.time) }),
        titles ? taskCell(r.session, titles) : null,
        h("td", { class: "cell-tool" }, h("code", { text: r.tool })),
        h("td", { class: "cell-decision" }, h("span", { class: `badge badge-decision-${String(r.decision).startsWith("denied") ? "deny" : "allow"}`, text: words.decision, "data-decision": r.decision })),
        h("td", { class: `cell-outcome ${r.outcome === "ok" ? "muted" : "text-error"}`, text: words.outcome, "data-outcome": r.outcome }),
        h("td", { class: "wrap cell-summary", text: words.summary || r.summary || JSON.stringify(r.arguments || {}) }),
      ),
    );
  }
  const columns = ["audit.time", titles ? "audit.task" : null, "audit.tool", "audit.decision", "audit.outcome", "audit.summary"].filter(Boolean);
  box.append(
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "table audit" }, h("thead", {}, h("tr", {}, columns.map((k) => h("th", { scope: "col", text: t(k) })))), body),
    ),
  );
}

export function show(section, arg) {
  clear(section);
  const trashBox = h("div", { class: "trash-box" });
  const auditBox = h("div", { class: "audit-box" });
  const input = h("input", { class: "input mono", name: "session", placeholder: t("audit.sessionPlaceholder"), "aria-label": t("audit.session"), value: arg || "" });
  const auditForm = h(
    "form",
    { class: "toolbar", "aria-label": t("audit.title") },
    input,
    h("button", { type: "submit", class: "btn", text: t("audit.load") }),
  );
  auditForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    renderAudit(auditBox, input.value.trim());
  });
  section.append(
    h("h2", { text: t("trash.title") }),
    h("p", { class: "muted", text: t("trash.hint") }),
    trashBox,
    h("h2", { text: t("audit.heading") }),
    auditForm,
    auditBox,
  );
  renderTrash(trashBox);
  // Why without an id too: the newest records of every task, each linked to its task.
  renderAudit(auditBox, input.value.trim());
}
