// A task's thread: its stored transcript and its live events (SSE), merged by run and seq.
// The agent's words render as sanitized Markdown (markdown.js); everything else is text only.
import { api, q } from "./api.js";
import { screenshotIn, showScreenshot } from "./browser-view.js";
import { clear, h } from "./dom.js";
import { errorText } from "./errors.js";
import { t } from "./i18n.js";
import { renderMarkdownInto, renderMarkdownSoon } from "./markdown.js";
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

function bubble(role, text, label) {
  const body = h("div", { class: "msg-text" });
  // Why: the agent writes Markdown (rendered, sanitized); the user's words show as typed.
  if (role === "assistant") renderMarkdownInto(body, text);
  else body.textContent = text;
  return h("div", { class: `msg msg-${role}` }, h("div", { class: "msg-role", text: label || t(`role.${role}`) }), body);
}

/** Stored messages: text as bubbles, tool calls folded with their results inside.
 * ``names``: who speaks, when not the user and the agent (``{user: "The lead"}``);
 * ``sessionId``: whose browser pictures the results name (browser-view.js); a result's
 * ``line`` (kept beside it since issue 25) is the picture's caption, as live. */
export function renderMessages(container, messages, names = {}, sessionId = "") {
  const calls = new Map();
  for (const msg of messages) {
    const role = msg.role === "user" ? "user" : "assistant";
    const blocks = Array.isArray(msg.content) ? msg.content : [{ type: "text", text: String(msg.content ?? "") }];
    let text = "";
    const flush = () => {
      if (text.trim()) container.appendChild(bubble(role, text, names[role]));
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
        if (details) {
          toolResult(details, !block.is_error, body);
          showScreenshot(details, sessionId, screenshotIn(body), typeof block.line === "string" ? block.line : "");
        } else {
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
  // Why: in a stored transcript a call without a result never finished (a crash, a
  // stop); it is not running, whatever the live pill said.
  for (const pill of container.querySelectorAll(".pill-running")) {
    pill.className = "pill pill-error";
    pill.textContent = t("tool.noResult");
  }
}

function approvalCard(sessionId, data, onAnswer) {
  const card = h("div", { class: "approval card", role: "group", "aria-label": t("approval.title"), "data-call": data.call_id });
  const buttons = h("div", { class: "actions" });
  // Why (issue 25): a password for the agent's browser is typed here; it goes with the yes
  // to the server and the page only, and leaves this card as soon as it was sent.
  const secret = data.secret ? h("input", { type: "password", class: "approval-secret", autocomplete: "off", "aria-label": t("approval.secretLabel"), on: { keydown: (e) => { if (e.key === "Enter" && secret.value) answer("once"); } } }) : null;
  const answer = async (value) => {
    if (secret && value !== "deny" && !secret.value) return secret.focus();
    card.dataset.answer = value;
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      const body = secret && value !== "deny" ? { answer: value, value: secret.value } : { answer: value };
      await api(`/v1/tasks/${q(sessionId)}/approvals/${q(data.call_id)}`, { method: "POST", body });
      resolveApproval(card, value === "deny" ? t("approval.denied") : t("approval.allowed"));
      onAnswer?.(value);
    } catch (err) {
      delete card.dataset.answer;
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
      errorToast(err);
    }
  };
  buttons.append(
    h("button", { type: "button", class: "btn btn-primary btn-allow", text: t(secret ? "approval.secretAllow" : "approval.allow"), on: { click: () => answer("once") } }),
    ...(secret ? [] : [h("button", { type: "button", class: "btn btn-always", text: t("approval.always"), title: t("approval.alwaysHint"), on: { click: () => answer("always") } })]),
    h("button", { type: "button", class: "btn btn-danger btn-deny", text: t("approval.deny"), on: { click: () => answer("deny") } }),
  );
  card.append(
    h("div", { class: "approval-title", text: t("approval.ask", { tool: data.tool || "" }) }),
    h("pre", { class: "code", text: pretty(data.summary) }),
    ...(secret ? [h("label", { class: "approval-secret-row" }, h("span", { text: t("approval.secret", { what: data.secret }) }), secret)] : []),
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
  card.querySelector(".approval-secret-row")?.remove(); // a typed password leaves the page
}

/**
 * The thread of one task: its transcript and its live events, merged so that nothing
 * shows twice and nothing is missing, across reloads, reconnects and server restarts.
 *
 * Every connection to ``/v1/tasks/{id}/events`` starts with a ``run`` event: the run
 * whose events follow and ``messages_before``, how many transcript messages come
 * before them. A run the page does not hold yet (first load, a new turn, a restarted
 * server) resets the thread: ``history`` shows the transcript up to there and
 * ``live`` this run's events from the first. A reconnect within the same run gets
 * only the events after the browser's Last-Event-ID, and a seq already shown is
 * skipped. ``onConnection`` says "ok", "lost" (retrying) or "signin".
 */
export function attach(sessionId, container, { onStatus, onDone, onConnection } = {}) {
  const say = (state) => {
    onConnection?.(state);
    document.dispatchEvent(new CustomEvent("hearth:connection", { detail: state }));
  };
  const history = h("div", { class: "transcript history" });
  const live = h("div", { class: "transcript live", "aria-live": "polite" });
  const thinking = h("div", { class: "thinking", role: "status", hidden: true }, h("span", { class: "spinner", "aria-hidden": "true" }), h("span", { class: "thinking-text" }));
  clear(container).append(history, live, thinking);
  let source = null;
  let run = null;
  let lastSeq = 0;
  let current = null; // the assistant bubble text streams into
  let currentText = "";
  let status = "running";
  let waitingSince = Date.now();
  let closed = false;
  let retryTimer = null;
  const runningTools = new Map(); // call id -> {pill, since}
  const openApprovals = () => live.querySelectorAll(".approval:not(.answered)");
  const parse = (ev) => {
    try {
      return JSON.parse(ev.data);
    } catch {
      return {};
    }
  };
  // Each event once: its id is "<run>-<seq>".
  const fresh = (ev) => {
    const id = String(ev.lastEventId || "");
    const cut = id.lastIndexOf("-");
    if (cut < 0 || id.slice(0, cut) !== run) return true;
    const seq = Number(id.slice(cut + 1));
    if (!Number.isFinite(seq) || seq <= lastSeq) return false;
    lastSeq = seq;
    return true;
  };
  const tick = () => {
    const now = Date.now();
    for (const entry of runningTools.values()) {
      // Why: a call waiting for the user's answer has not started; it says so, not "running".
      const s = Math.floor((now - entry.since) / 1000);
      entry.pill.className = entry.waiting ? "pill pill-waiting" : "pill pill-running";
      entry.pill.textContent = entry.waiting ? t("tool.waiting") : s >= 1 ? t("live.runningFor", { s }) : t("tool.running");
    }
    const quiet = status === "running" && !runningTools.size && !openApprovals().length;
    thinking.hidden = !quiet || closed;
    if (quiet) {
      const s = Math.floor((now - waitingSince) / 1000);
      thinking.querySelector(".thinking-text").textContent = s >= 1 ? t("live.thinkingFor", { s }) : t("live.thinking");
    }
  };
  const ticker = setInterval(tick, 500);
  const settle = () => {
    waitingSince = Date.now();
    tick();
  };

  const reset = async (info) => {
    run = info.run;
    lastSeq = info.after || 0;
    current = null;
    currentText = "";
    runningTools.clear();
    clear(live);
    const token = run;
    const before = info.messages_before ?? 0;
    if (!before) {
      clear(history);
      return;
    }
    try {
      const data = await api(`/v1/sessions/${q(sessionId)}/messages?count=30&before=${before}`);
      if (token !== run) return; // another run came meanwhile
      clear(history);
      const hidden = Math.min(before, data.total || 0) - (data.returned || 0);
      if (hidden > 0) history.append(h("p", { class: "muted small", text: t("tasks.shown", { shown: data.returned, total: before }) }));
      renderMessages(history, data.messages || [], {}, sessionId);
    } catch (err) {
      if (token === run) clear(history).append(h("p", { class: "form-error", text: t("error.prefix", { detail: errorText(err) }) }));
    }
  };

  const handlers = {
    run: (data) => {
      say("ok");
      if (data.run !== run) reset(data);
      status = data.status || status;
      settle();
    },
    prompt: (data) => {
      current = null;
      live.append(bubble("user", data.text || ""));
      settle();
    },
    text: (data) => {
      if (!current) {
        current = bubble("assistant", "");
        currentText = "";
        live.appendChild(current);
      }
      currentText += data.text ?? "";
      // Why at the next frame: a burst of deltas renders once, with the latest text.
      renderMarkdownSoon(current.querySelector(".msg-text"), currentText);
      settle();
    },
    tool_call: (data) => {
      current = null;
      const details = toolCall(data.id, data.name, data.arguments ?? data.summary ?? data.input);
      details.open = true;
      const pill = details.querySelector(".pill");
      runningTools.set(String(data.id), { pill, since: Date.now() });
      live.appendChild(details);
      tick();
    },
    tool_result: (data) => {
      current = null;
      runningTools.delete(String(data.id));
      const details = live.querySelector(`details[data-call="${CSS.escape(String(data.id))}"]`);
      const text = pretty(data.summary ?? data.output ?? "");
      if (details) {
        toolResult(details, data.ok !== false, text);
        details.open = false;
        showScreenshot(details, sessionId, data.screenshot, data.line);
      }
      for (const card of openApprovals()) if (card.dataset.call === String(data.id)) resolveApproval(card, t("approval.answered"));
      settle();
    },
    approval: (data) => {
      current = null;
      const entry = runningTools.get(String(data.call_id));
      if (entry) entry.waiting = true;
      const card = approvalCard(sessionId, data);
      live.appendChild(card);
      card.querySelector(".btn-allow").focus();
      tick();
    },
    approval_cancelled: (data) => {
      for (const card of openApprovals()) if (!data.call_id || card.dataset.call === data.call_id) resolveApproval(card, t("approval.cancelled"));
    },
    notice: (data) => {
      live.append(h("p", { class: "notice-line", text: data.message || "" }));
    },
    status: (data) => {
      status = data.status || status;
      if (status !== "waiting") for (const card of openApprovals()) resolveApproval(card, t("approval.answered"));
      if (status === "running") {
        for (const entry of runningTools.values()) {
          if (entry.waiting) Object.assign(entry, { waiting: false, since: Date.now() });
        }
      }
      onStatus?.(status, data.reason);
      settle();
    },
    done: (data) => {
      finish();
      for (const card of openApprovals()) resolveApproval(card, t("approval.cancelled"));
      onDone?.(data.reason, data);
    },
  };

  function finish() {
    closed = true;
    clearInterval(ticker);
    clearTimeout(retryTimer);
    thinking.hidden = true;
    source?.close();
  }

  function connect() {
    source = new EventSource(`/v1/tasks/${q(sessionId)}/events`);
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (ev) => {
        if (closed || (name !== "run" && !fresh(ev))) return;
        handle(parse(ev));
      });
    }
    source.addEventListener("error", () => {
      if (closed) return;
      if (source.readyState === EventSource.CONNECTING) {
        say("lost"); // the browser retries by itself
        return;
      }
      // Closed for good (refused, not an event stream): find out why, then try again.
      source.close();
      probe();
    });
  }

  async function probe() {
    try {
      await api("/v1/info");
    } catch (err) {
      if (err.status === 401) {
        say("signin");
        return; // the sign-in link in the notice starts again
      }
      if (err.status === 404) return;
      say("lost");
      retryTimer = setTimeout(probe, 2000);
      return;
    }
    if (!closed) connect();
  }

  connect();
  tick();
  return {
    close() {
      finish();
    },
  };
}
