// Trash (restore a deleted file) and the audit trail of a task.
import { api, listOf, q } from "./api.js";
import { clear, h } from "./dom.js";
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
    box.append(h("p", { class: "form-error", text: t("error.prefix", { detail: err.message }) }));
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
        h("td", {}, h("code", { text: item.original })),
        h("td", { class: "muted", text: when(item.deleted_at) }),
        h("td", { class: "muted", text: item.reason || "" }),
        h("td", { class: "muted num", text: size(item.size) }),
        h(
          "td",
          {},
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
      "table",
      { class: "table" },
      h("thead", {}, h("tr", {}, ["trash.file", "trash.deleted", "trash.reason", "trash.size", "trash.action"].map((k) => h("th", { scope: "col", text: t(k) })))),
      body,
    ),
  );
}

/** A task's audit records: what each tool call was, who allowed it, how it ended. */
export async function renderAudit(box, sessionId) {
  clear(box);
  let records;
  try {
    const query = sessionId ? `session=${q(sessionId)}&limit=200` : "limit=200";
    records = listOf(await api(`/v1/audit?${query}`), "records", "audit", "entries");
  } catch (err) {
    box.append(h("p", { class: "form-error", text: t("error.prefix", { detail: err.message }) }));
    return;
  }
  box.append(h("h3", { text: t("audit.title") }));
  if (!records.length) {
    box.append(h("p", { class: "muted", text: t("audit.empty") }));
    return;
  }
  const body = h("tbody");
  for (const r of records) {
    body.appendChild(
      h(
        "tr",
        {},
        h("td", { class: "muted nowrap", text: when(r.time) }),
        h("td", {}, h("code", { text: r.tool })),
        h("td", {}, h("span", { class: `badge badge-decision-${String(r.decision).startsWith("denied") ? "deny" : "allow"}`, text: r.decision })),
        h("td", { class: r.outcome === "ok" ? "muted" : "text-error", text: r.outcome }),
        h("td", { class: "wrap", text: r.summary || JSON.stringify(r.arguments || {}) }),
      ),
    );
  }
  box.append(
    h(
      "table",
      { class: "table audit" },
      h("thead", {}, h("tr", {}, ["audit.time", "audit.tool", "audit.decision", "audit.outcome", "audit.summary"].map((k) => h("th", { scope: "col", text: t(k) })))),
      body,
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
  if (arg) renderAudit(auditBox, arg);
}
