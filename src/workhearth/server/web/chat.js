// Chat: start a task in a workspace and mode, stream its answer, answer approvals.
import { api, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { errorText, outcomeText } from "./errors.js";
import { t } from "./i18n.js";
import { attach } from "./stream.js";
import { errorToast, info, statusBadge } from "./ui.js";

// ``task``, ``workspace``, ``mode`` and ``model`` are the form's draft: a language switch
// redraws the view and what was typed stays. ``prompt`` is the last prompt sent.
const state = { task: "", mode: "agent", workspace: null, model: "" };
let stream = null;

// Folders an agent should not be let loose in: the system's own, and a whole home folder.
const SYSTEM_ROOTS = new Set(["/", "/home", "/Users", "/var", "/opt", "/srv", "/mnt", "/media", "/run", "/snap", "/root", "/private", "/Library", "/Applications"]);
const SYSTEM_TREES = ["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/usr", "/System", "/private/etc"];

function normalPath(raw) {
  const text = raw.trim().replace(/\\/g, "/");
  if (/^[A-Za-z]:\/?$/.test(text)) return `${text.slice(0, 2).toUpperCase()}/`;
  if (!text.startsWith("/") && !text.startsWith("~")) return text;
  const parts = [];
  for (const part of text.split("/").slice(text.startsWith("~") ? 1 : 0)) {
    if (!part || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `${text.startsWith("~") ? "~" : ""}/${parts.join("/")}`;
}

/** "system", "home" or "" for a workspace path as typed. */
export function riskyFolder(raw) {
  const path = normalPath(raw);
  if (!path) return "";
  if (/^[A-Z]:\/$/.test(path) || /^[A-Za-z]:\/(windows|program files)(\/|$)/i.test(path)) return "system";
  if (SYSTEM_ROOTS.has(path) || SYSTEM_TREES.some((root) => path === root || path.startsWith(`${root}/`))) return "system";
  if (path === "~/" || /^\/(home|Users)\/[^/]+$/.test(path) || /^[A-Za-z]:\/Users\/[^/]+\/?$/i.test(path)) return "home";
  return "";
}

function form(section) {
  const warning = h("p", { class: "form-warn", role: "alert", hidden: true });
  const send = h("button", { type: "submit", class: "btn btn-primary", text: t("chat.send") });
  const el = h(
    "form",
    { class: "card form chat-form", "aria-label": t("chat.start") },
    h("label", { class: "field" }, h("span", { text: t("chat.task") }), h("textarea", { name: "task", class: "input", rows: 4, required: true, placeholder: t("chat.placeholder") })),
    h(
      "div",
      { class: "row" },
      h("label", { class: "field grow" }, h("span", { text: t("chat.workspace") }), h("input", { name: "workspace", class: "input mono", value: state.workspace ?? info.workspace ?? "" })),
      h(
        "label",
        { class: "field" },
        h("span", { text: t("chat.mode") }),
        h(
          "select",
          { name: "mode", class: "input" },
          ["ask", "agent", "quest"].map((m) => h("option", { value: m, text: t(`mode.${m}`) })),
        ),
      ),
      h("label", { class: "field" }, h("span", { text: t("chat.model") }), h("input", { name: "model", class: "input", placeholder: t("chat.modelDefault"), value: state.model })),
    ),
    h("p", { class: "muted small", text: t("chat.modeHint") }),
    warning,
    h("p", { class: "form-error", role: "alert" }),
    h("div", { class: "actions" }, send, h("span", { class: "muted small", text: t("chat.sendHint") })),
  );
  el.elements.task.value = state.task;
  el.elements.mode.value = state.mode;
  // The path the user agreed to start in after the warning; any edit asks again.
  let confirmed = null;
  const unwarn = () => {
    confirmed = null;
    warning.hidden = true;
    send.textContent = t("chat.send");
  };
  el.addEventListener("input", (ev) => {
    Object.assign(state, { task: el.elements.task.value, workspace: el.elements.workspace.value, mode: el.elements.mode.value, model: el.elements.model.value });
    if (ev.target === el.elements.workspace) unwarn();
  });
  el.addEventListener("change", () => (state.mode = el.elements.mode.value));
  el.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) el.requestSubmit();
  });
  el.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { task: el.elements.task.value, mode: el.elements.mode.value };
    const workspace = el.elements.workspace.value.trim();
    if (workspace) body.workspace = workspace;
    if (el.elements.model.value.trim()) body.model = el.elements.model.value.trim();
    // Why before sending: a task in / or /etc can change what the computer needs to run;
    // it starts there only after the user has read this and pressed the button again.
    const risk = workspace ? riskyFolder(workspace) : "";
    if (risk && confirmed !== workspace) {
      confirmed = workspace;
      warning.textContent = t(risk === "home" ? "chat.warnHome" : "chat.warnSystem", { path: workspace, button: t("chat.sendAnyway") });
      warning.hidden = false;
      send.textContent = t("chat.sendAnyway");
      el.elements.workspace.focus();
      return;
    }
    Object.assign(state, { mode: body.mode, workspace: body.workspace || "", model: body.model || "" });
    try {
      const started = await api("/v1/tasks", { method: "POST", body });
      state.task = "";
      location.hash = `#/chat/${encodeURIComponent(started.session_id)}`;
    } catch (err) {
      $(".form-error", el).textContent = errorText(err);
    }
  });
  section.append(el);
  setTimeout(() => el.elements.task.focus(), 0);
}

function conversation(section, id) {
  const status = h("span", { class: "task-status" });
  const thread = h("div", { class: "thread" });
  const after = h("div", { class: "actions", hidden: true });
  section.append(
    h(
      "div",
      { class: "task-head" },
      h("div", {}, h("h2", { class: "task-title", text: t("chat.title") }), h("a", { class: "muted small mono", href: `#/tasks/${q(id)}`, text: id })),
      status,
      h("button", {
        type: "button",
        class: "btn btn-danger btn-stop",
        text: t("tasks.stop"),
        on: {
          click: () => api(`/v1/tasks/${q(id)}/stop`, { method: "POST" }).catch(errorToast),
        },
      }),
    ),
    thread,
    after,
  );
  after.append(
    h("a", { class: "btn", href: `#/tasks/${q(id)}`, text: t("chat.openTask") }),
    h("a", { class: "btn btn-primary btn-new-chat", href: "#/chat", text: t("chat.new") }),
  );
  clear(status).append(statusBadge("running"));
  // Why the thread, not the prompt typed here: a reload or a second tab shows the same
  // conversation, prompt included, from the transcript and the run's events.
  stream = attach(id, thread, {
    onStatus: (value) => clear(status).append(statusBadge(value)),
    onDone: (_reason, end) => {
      stream = null;
      // Why the task's own status: a run that ended on an error is "failed", never a green "done".
      clear(status).append(statusBadge(end?.status || "done"));
      if (end?.message) status.append(h("span", { class: "task-reason", role: "alert", text: ` ${outcomeText(end)}` }));
      after.hidden = false;
      section.querySelector(".btn-stop")?.remove();
    },
  });
}

export function show(section, arg) {
  stream?.close();
  stream = null;
  clear(section);
  if (arg) conversation(section, arg);
  else form(section);
}

export function hide() {
  stream?.close();
  stream = null;
  // Why: a hidden conversation must not leave a second thread (and status) in the page.
  const view = document.getElementById("view-chat");
  if (view?.querySelector(".thread")) clear(view);
}
