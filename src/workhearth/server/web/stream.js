// A task's live events (SSE) and its stored transcript, both rendered as text only.
import { api, q } from "./api.js";
import { clear, h } from "./dom.js";
import { t } from "./i18n.js";
import { errorToast } from "./ui.js";

function pretty(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}

function blockText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b) => (b && b.type === "text" ? b.text : pretty(b))).join("\n");
  return pretty(content);
}

/** A folded tool call: its name and arguments; the result is added when it comes. */
export function toolCall(id, name, args) {
  return h(
    "details",
    { class: "tool", "data-call": id || "" },
    h(
      "summary",
      {},
      h("span", { class: "tool-name", text: name || "tool" }),
      h("span", { class: "pill pill-running", text: t("tool.running") }),
    ),
    h("div", { class: "tool-label", text: t("tool.arguments") }),
    h("pre", { class: "code", text: pretty(args) }),
  );
}

export function toolResult(details, ok, text) {
  const pill = details.querySelector(".pill");
  if (pill) {
    pill.className = `pill ${ok ? "pill-ok" : "pill-error"}`;
    pill.textContent = ok ? t("tool.ok") : t("tool.error");
  }
  details.append(h("div", { class: "tool-label", text: t("tool.result") }), h("pre", { class: "code", text }));
}

function bubble(role, text) {
  return h(
    "div",
    { class: `msg msg-${role}` },
    h("div", { class: "msg-role", text: t(`role.${role}`) }),
    h("div", { class: "msg-text", text }),
  );
}

/** Stored messages: text as bubbles, tool calls folded with their results inside. */
export function renderMessages(container, messages) {
  const calls = new Map();
  for (const msg of messages) {
    const role = msg.role === "user" ? "user" : "assistant";
    const blocks = Array.isArray(msg.content) ? msg.content : [{ type: "text", text: String(msg.content ?? "") }];
    let text = "";
    const flush = () => {
      if (text.trim()) container.appendChild(bubble(role, text));
      text = "";
    };
    for (const block of blocks) {
      if (!block) continue;
      if (block.type === "text") text += block.text || "";
      else if (block.type === "tool_use") {
        flush();
        const details = toolCall(block.id, block.name, block.input);
        calls.set(block.id, details);
        container.appendChild(details);
      } else if (block.type === "tool_result") {
        flush();
        const details = calls.get(block.tool_use_id);
        const body = blockText(block.content);
        if (details) toolResult(details, !block.is_error, body);
        else {
          const lone = toolCall(block.tool_use_id, t("tool.result"), "");
          toolResult(lone, !block.is_error, body);
          container.appendChild(lone);
        }
      } else if (block.type === "thinking") {
        flush();
        container.appendChild(
          h("details", { class: "tool thinking" }, h("summary", { text: t("tool.thinking") }), h("pre", { class: "code", text: block.thinking || "" })),
        );
      }
    }
    flush();
  }
}

function approvalCard(sessionId, data, onAnswer) {
  const card = h("div", { class: "approval card", role: "group", "aria-label": t("approval.title"), "data-call": data.call_id });
  const buttons = h("div", { class: "actions" });
  const answer = async (value) => {
    card.dataset.answer = value;
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await api(`/v1/tasks/${q(sessionId)}/approvals/${q(data.call_id)}`, { method: "POST", body: { answer: value } });
      resolveApproval(card, value === "deny" ? t("approval.denied") : t("approval.allowed"));
      onAnswer?.(value);
    } catch (err) {
      delete card.dataset.answer;
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
      errorToast(err);
    }
  };
  buttons.append(
    h("button", { type: "button", class: "btn btn-primary btn-allow", text: t("approval.allow"), on: { click: () => answer("once") } }),
    h("button", { type: "button", class: "btn btn-always", text: t("approval.always"), on: { click: () => answer("always") } }),
    h("button", { type: "button", class: "btn btn-danger btn-deny", text: t("approval.deny"), on: { click: () => answer("deny") } }),
  );
  card.append(
    h("div", { class: "approval-title", text: t("approval.ask", { tool: data.tool || "" }) }),
    h("pre", { class: "code", text: pretty(data.summary) }),
    buttons,
  );
  return card;
}

function resolveApproval(card, label) {
  if (card.classList.contains("answered")) return;
  card.classList.add("answered");
  // Why: the task's next status can arrive before our POST returns; say what was chosen here.
  if (card.dataset.answer) label = card.dataset.answer === "deny" ? t("approval.denied") : t("approval.allowed");
  const buttons = card.querySelector(".actions");
  if (buttons) buttons.replaceWith(h("div", { class: "muted", text: label }));
}

/**
 * Follow ``/v1/tasks/{id}/events``. The server replays the run's events on every
 * connect, so a (re)connect starts from an empty container: re-attaching shows
 * the whole run, never twice.
 */
export function attach(sessionId, container, { onStatus, onDone } = {}) {
  const source = new EventSource(`/v1/tasks/${q(sessionId)}/events`);
  let current = null;
  let closed = false;
  const parse = (ev) => {
    try {
      return JSON.parse(ev.data);
    } catch {
      return { text: ev.data };
    }
  };
  const openApprovals = () => container.querySelectorAll(".approval:not(.answered)");
  source.addEventListener("open", () => {
    clear(container);
    current = null;
  });
  source.addEventListener("text", (ev) => {
    const data = parse(ev);
    const delta = typeof data === "string" ? data : (data.delta ?? data.text ?? "");
    if (!current) {
      current = bubble("assistant", "");
      container.appendChild(current);
    }
    current.querySelector(".msg-text").textContent += delta;
  });
  source.addEventListener("tool_call", (ev) => {
    const data = parse(ev);
    current = null;
    const details = toolCall(data.id, data.name, data.arguments ?? data.summary ?? data.input);
    details.open = true;
    container.appendChild(details);
  });
  source.addEventListener("tool_result", (ev) => {
    const data = parse(ev);
    current = null;
    const details = container.querySelector(`details[data-call="${CSS.escape(String(data.id))}"]`);
    const text = pretty(data.summary ?? data.output ?? "");
    if (details) {
      toolResult(details, data.ok !== false, text);
      details.open = false;
    }
    for (const card of openApprovals()) if (card.dataset.call === String(data.id)) resolveApproval(card, t("approval.answered"));
  });
  source.addEventListener("approval", (ev) => {
    const data = parse(ev);
    current = null;
    const card = approvalCard(sessionId, data);
    container.appendChild(card);
    card.querySelector(".btn-allow").focus();
  });
  source.addEventListener("status", (ev) => {
    const data = parse(ev);
    if (data.status !== "waiting") for (const card of openApprovals()) resolveApproval(card, t("approval.answered"));
    onStatus?.(data.status);
  });
  source.addEventListener("approval_cancelled", (ev) => {
    const data = parse(ev);
    for (const card of openApprovals()) if (!data.call_id || card.dataset.call === data.call_id) resolveApproval(card, t("approval.cancelled"));
  });
  source.addEventListener("done", (ev) => {
    const data = parse(ev);
    closed = true;
    source.close();
    for (const card of openApprovals()) resolveApproval(card, t("approval.cancelled"));
    onDone?.(data.reason, data);
  });
  source.addEventListener("error", () => {
    // Why: EventSource reconnects by itself; a closed source after "done" must not.
    if (closed) source.close();
  });
  return {
    close() {
      closed = true;
      source.close();
    },
  };
}
