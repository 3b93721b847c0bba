// Chat: start a task in a workspace and mode, stream its answer, answer approvals.
import { api, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { t } from "./i18n.js";
import { attach } from "./stream.js";
import { errorToast, info, statusBadge } from "./ui.js";

const state = { prompt: "", mode: "agent", workspace: "", model: "" };
let stream = null;

function form(section) {
  const el = h(
    "form",
    { class: "card form chat-form", "aria-label": t("chat.start") },
    h("label", { class: "field" }, h("span", { text: t("chat.task") }), h("textarea", { name: "task", class: "input", rows: 4, required: true, placeholder: t("chat.placeholder") })),
    h(
      "div",
      { class: "row" },
      h("label", { class: "field grow" }, h("span", { text: t("chat.workspace") }), h("input", { name: "workspace", class: "input mono", value: state.workspace || info.workspace || "" })),
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
    h("p", { class: "form-error", role: "alert" }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "btn btn-primary", text: t("chat.send") }), h("span", { class: "muted small", text: t("chat.sendHint") })),
  );
  el.elements.mode.value = state.mode;
  el.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) el.requestSubmit();
  });
  el.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { task: el.elements.task.value, mode: el.elements.mode.value };
    if (el.elements.workspace.value.trim()) body.workspace = el.elements.workspace.value.trim();
    if (el.elements.model.value.trim()) body.model = el.elements.model.value.trim();
    Object.assign(state, { prompt: body.task, mode: body.mode, workspace: body.workspace || "", model: body.model || "" });
    try {
      const started = await api("/v1/tasks", { method: "POST", body });
      location.hash = `#/chat/${encodeURIComponent(started.session_id)}`;
    } catch (err) {
      $(".form-error", el).textContent = err.message;
    }
  });
  section.append(el);
  setTimeout(() => el.elements.task.focus(), 0);
}

function conversation(section, id) {
  const status = h("span", { class: "task-status" });
  const live = h("div", { class: "transcript live", "aria-live": "polite" });
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
    state.prompt ? h("div", { class: "msg msg-user" }, h("div", { class: "msg-role", text: t("role.user") }), h("div", { class: "msg-text", text: state.prompt })) : null,
    live,
    after,
  );
  after.append(
    h("a", { class: "btn", href: `#/tasks/${q(id)}`, text: t("chat.openTask") }),
    h("a", { class: "btn btn-primary btn-new-chat", href: "#/chat", text: t("chat.new") }),
  );
  clear(status).append(statusBadge("running"));
  stream = attach(id, live, {
    onStatus: (value) => clear(status).append(statusBadge(value)),
    onDone: (_reason, end) => {
      stream = null;
      // Why the task's own status: a run that ended on an error is "failed", never a green "done".
      clear(status).append(statusBadge(end?.status || "done"));
      if (end?.message) status.append(h("span", { class: "task-reason", role: "alert", text: ` ${end.message}` }));
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
  else {
    state.prompt = "";
    form(section);
  }
}

export function hide() {
  stream?.close();
  stream = null;
}

/** Start a chat from elsewhere (the skills gallery) with a ready prompt. */
export function remember(prompt) {
  state.prompt = prompt;
}
