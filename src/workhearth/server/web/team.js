// Team tasks (issue #23): start one; answer the lead's questions; read, nudge and approve the
// plan; follow the board (one row per step) and each specialist's work; read the report.
// Everything shown comes from GET /v1/tasks/{id}/team, polled while the task runs or waits.
import { api, q } from "./api.js";
import { $, clear, h } from "./dom.js";
import { errorText, known } from "./errors.js";
import { getLang, t } from "./i18n.js";
import { renderMarkdownInto } from "./markdown.js";
import { renderMessages } from "./stream.js";
import { info } from "./ui.js";

const POLL_MS = 1000;
const LIVE = new Set(["running", "waiting"]);

// ------------------------------------------------------------------ start
/** Add the "Team task" button to the task list's ``toolbar`` and its form below it. */
export function addTeamStart(toolbar) {
  const form = startForm();
  const button = h("button", {
    type: "button",
    class: "btn btn-team-new",
    text: t("team.new"),
    "aria-expanded": "false",
    on: {
      click: () => {
        form.hidden = !form.hidden;
        button.setAttribute("aria-expanded", String(!form.hidden));
        if (!form.hidden) form.elements.task.focus();
      },
    },
  });
  toolbar.append(button);
  toolbar.after(form);
}

function startForm() {
  const error = h("p", { class: "form-error", role: "alert" });
  const form = h(
    "form",
    { class: "card form team-form", hidden: true, "aria-label": t("team.start") },
    h("h3", { text: t("team.start") }),
    h("label", { class: "field" }, h("span", { text: t("team.task") }), h("textarea", { name: "task", class: "input", rows: 3, required: true, placeholder: t("team.placeholder") })),
    h(
      "div",
      { class: "row" },
      h("label", { class: "field grow" }, h("span", { text: t("chat.workspace") }), h("input", { name: "workspace", class: "input mono", value: info.workspace || "" })),
      h(
        "label",
        { class: "field" },
        h("span", { text: t("chat.mode") }),
        h("select", { name: "mode", class: "input" }, ["ask", "agent", "quest"].map((m) => h("option", { value: m, text: t(`mode.${m}`) }))),
      ),
    ),
    h("p", { class: "muted small", text: t("team.hint") }),
    error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "btn btn-primary", text: t("team.go") })),
  );
  form.elements.mode.value = "agent";
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit();
  });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { task: form.elements.task.value, team: true, mode: form.elements.mode.value };
    const workspace = form.elements.workspace.value.trim();
    if (workspace) body.workspace = workspace;
    error.textContent = "";
    try {
      const started = await api("/v1/tasks", { method: "POST", body });
      location.hash = `#/tasks/${q(started.session_id)}`;
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  return form;
}

// ------------------------------------------------------------------ words
const colon = () => t("team.md.colon");

export function roleName(name) {
  const key = `team.role.${name}`;
  return name && known(key) ? t(key) : name || "";
}

function statusWord(status) {
  const key = `team.status.${status}`;
  return known(key) ? t(key) : status;
}

/** "12 s", "3 min 5 s", "1 h 4 min" from Unix seconds; "" for a step that has not started. */
export function elapsed(started, ended, now = Date.now() / 1000) {
  if (!started) return "";
  const total = Math.max(0, Math.round((ended || now) - started));
  if (total < 60) return t("team.seconds", { s: total });
  if (total < 3600) return t("team.minutes", { m: Math.floor(total / 60), s: total % 60 });
  return t("team.hours", { h: Math.floor(total / 3600), m: Math.floor((total % 3600) / 60) });
}

// Why by line patterns: hearth writes the plan's and the report's frame (headings, field
// names, statuses) in English; the page words them in its language and leaves the
// lead's own words as they are. A line the patterns do not know stays as written.
const PLAN_LINES = [
  [/^# Plan: (.*)$/, (m) => `# ${t("team.md.plan")}${colon()}${m[1]}`],
  [/^## (Answers|Deliverables|Steps)\s*$/, (m) => `## ${t(`team.md.${m[1].toLowerCase()}`)}`],
  [/^(###\s+.*?)\s*\{#[^}]+\}\s*$/, (m) => m[1]],
  [/^([-*]) owner: (.*)$/i, (m) => `${m[1]} ${t("team.md.owner")}${colon()}${roleName(m[2].trim())}`],
  [/^([-*]) depends on: (.*)$/i, (m) => `${m[1]} ${t("team.md.dependsOn")}${colon()}${m[2].trim() === "none" ? t("team.md.none") : m[2]}`],
  [/^([-*]) (files|produces|check): (.*)$/i, (m) => `${m[1]} ${t(`team.md.${m[2].toLowerCase()}`)}${colon()}${m[3]}`],
];
const REPORT_LINES = [
  [/^# Report: (.*)$/, (m) => `# ${t("team.md.report")}${colon()}${m[1]}`],
  [/^Deliverables:\s*$/, () => `${t("team.md.deliverables")}${colon().trim()}`],
  [/^- (.+) \(([^()]+)\): (pending|running|done|failed|blocked|conflict)$/, (m) => `- ${m[1]}${t("team.md.paren", { words: roleName(m[2]) })}${colon()}${statusWord(m[3])}`],
  [
    /^(\s+)conflict: (.+?) \((\w+)\)(?:; the other version is beside it: (.*))?$/,
    (m) => `${m[1]}${t("team.md.conflict")}${colon()}${m[2]}${t("team.md.paren", { words: known(`team.reason.${m[3]}`) ? t(`team.reason.${m[3]}`) : m[3] })}${m[4] ? `; ${t("team.md.beside")}${colon()}${m[4]}` : ""}`,
  ],
  [/^- (.+): (ready|missing)$/, (m) => `- ${m[1]}${colon()}${t(`team.md.${m[2]}`)}`],
];

function reword(text, patterns) {
  return String(text || "")
    .split("\n")
    .map((line) => {
      for (const [pattern, words] of patterns) {
        const m = line.match(pattern);
        if (m) return words(m);
      }
      return line;
    })
    .join("\n");
}

export const planText = (text) => reword(text, PLAN_LINES);
// Why the breaks: the report puts a step's summary, error and conflicts on indented lines
// under it, which Markdown would run into the step's line.
export const reportText = (text) =>
  reword(text, REPORT_LINES)
    .split("\n")
    .map((line, i, lines) => (line.trim() && /^\s{2,}\S/.test(lines[i + 1] || "") ? `${line}\\` : line))
    .join("\n");

// Why not Element.append: it would write a skipped part (null) as the word "null".
function append(box, ...parts) {
  box.append(...parts.filter(Boolean));
}

function listWords(items) {
  return items.join(t("team.and"));
}

function badge(status) {
  return h("span", { class: `badge team-status team-status-${status}`, text: statusWord(status) });
}

// ------------------------------------------------------------------ the panel
/**
 * The team panel of task ``id``: hidden unless the task is a team task. ``onResumed`` is
 * called after the page answered, nudged or approved (the task runs again: follow it).
 * ``setStatus(value)`` tells it the task's status changed (polling starts again when live).
 */
export function teamPanel(id, { onResumed } = {}) {
  const head = h("div", { class: "team-head" });
  const say = h("p", { class: "team-say", "aria-live": "polite" });
  const boxes = {
    questions: h("div", { class: "team-questions" }),
    plan: h("div", { class: "team-plan-box" }),
    board: h("div", { class: "team-board-box" }),
    detail: h("div", { class: "team-detail", hidden: true }),
    conflicts: h("div", { class: "team-conflicts" }),
    report: h("div", { class: "team-report" }),
  };
  const el = h("section", { class: "team card", hidden: true, "aria-label": t("team.title") }, head, say, ...Object.values(boxes));
  const signs = new Map(); // box -> what it shows now; a box is redrawn only when that changes
  const rows = new Map(); // step id -> its board row
  let team = null;
  let status = null;
  let timer = null;
  let known_ = null; // null: not asked yet; false: not a team task
  let action = ""; // the page's last answer to the task: answers, nudge, approve
  let selected = null;
  const shown = new Map(); // a thread's class -> the messages it shows (their JSON)

  const live = () => el.isConnected || known_ === null;

  const schedule = (ms = POLL_MS) => {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  };

  async function poll() {
    timer = null;
    if (!live() || known_ === false) return;
    let next;
    let task;
    try {
      [next, task] = await Promise.all([api(`/v1/tasks/${q(id)}/team`), api(`/v1/tasks/${q(id)}`).catch(() => null)]);
    } catch (err) {
      if (err.status === 404) {
        known_ = false; // an ordinary task: no panel
        el.hidden = true;
        return;
      }
      if (known_ && el.isConnected) say.textContent = t("team.loadFailed", { detail: errorText(err) });
      if (el.isConnected) schedule(POLL_MS * 3);
      return;
    }
    if (!el.isConnected) return;
    known_ = true;
    team = next;
    if (task?.status) status = task.status;
    el.hidden = false;
    render();
    if (LIVE.has(status)) schedule();
  }

  function render() {
    renderHead();
    draw("questions", [team.phase, canAct("questions"), team.questions, team.answers], drawQuestions);
    draw("plan", [team.plan_version, team.plan, team.phase, canAct("plan"), getLang()], drawPlan);
    drawBoard();
    drawDetail();
    const conflicts = team.steps.flatMap((s) => (s.conflicts || []).map((c) => ({ ...c, step: s.id })));
    draw("conflicts", [conflicts], () => drawConflicts(conflicts));
    draw("report", [team.report], drawReport);
  }

  const canAct = (phase) => team.phase === phase && status !== null && status !== "running";

  function draw(name, sign, fn) {
    const key = JSON.stringify(sign);
    if (signs.get(name) === key) return;
    signs.set(name, key);
    clear(boxes[name]);
    fn(boxes[name]);
  }

  function renderHead() {
    const phase = team.phase;
    const sign = JSON.stringify([phase, status]);
    if (signs.get("head") !== sign) {
      signs.set("head", sign);
      clear(head).append(
        h("h2", { text: t("team.title") }),
        h("span", { class: `badge team-phase team-phase-${phase}`, text: t(`team.phase.${phase}`) }),
      );
    }
    const done = team.steps.filter((s) => s.status === "done").length;
    say.textContent = sayWords(phase, done);
  }

  function sayWords(phase, done) {
    if (status === "stopped" && phase !== "done") return t("team.say.stopped");
    const running = status === "running";
    if (phase === "start") return t("team.say.start");
    if (phase === "questions") return t(running ? "team.say.answering" : "team.say.questions");
    if (phase === "plan") {
      if (!running) return t("team.say.plan");
      return t(action === "approve" ? "team.say.starting" : action === "answers" ? "team.say.answering" : "team.say.revising");
    }
    if (phase === "running") return t("team.say.running", { done, total: team.steps.length });
    const unfinished = team.steps.filter((s) => s.status !== "done");
    if (phase === "failed" && unfinished.length && unfinished.every((s) => s.status === "conflict")) return t("team.say.conflict");
    return t(`team.say.${phase}`);
  }

  // Why one door for every answer: the task runs again, so the thread must be followed
  // again and the panel polled again, whatever was answered.
  async function resume(body, what, box, buttons) {
    for (const b of buttons) b.disabled = true;
    const error = $(".form-error", box);
    if (error) error.textContent = "";
    try {
      await api(`/v1/tasks/${q(id)}/resume`, { method: "POST", body });
      action = what;
      status = "running";
      signs.clear();
      render();
      onResumed?.();
      schedule(300);
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      if (error) error.textContent = errorText(err);
    }
  }

  // -------------------------------------------------------------- questions
  function drawQuestions(box) {
    if (!team.questions.length) return;
    box.append(h("h3", { text: t("team.questions") }));
    if (!canAct("questions")) {
      box.append(
        h(
          "dl",
          { class: "team-answers" },
          team.questions.map((qn) => [h("dt", { text: qn.text }), h("dd", { text: team.answers[qn.id] ?? qn.default })]),
        ),
      );
      return;
    }
    const submit = h("button", { type: "submit", class: "btn btn-primary btn-team-answer", text: t("team.submit") });
    const form = h("form", { class: "team-question-form" }, team.questions.map(questionField), h("p", { class: "form-error", role: "alert" }), h("div", { class: "actions" }, submit));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const answers = {};
      for (const qn of team.questions) {
        const field = form.elements[`q-${qn.id}`];
        answers[qn.id] = (field?.value ?? "").trim() || qn.default;
      }
      resume({ answers }, "answers", form, [submit]);
    });
    box.append(form);
  }

  function questionField(qn) {
    const name = `q-${qn.id}`;
    if (qn.choices.length) {
      return h(
        "fieldset",
        { class: "team-question", "data-question": qn.id },
        h("legend", { text: qn.text }),
        qn.choices.map((choice) =>
          h(
            "label",
            { class: "team-choice" },
            h("input", { type: "radio", name, value: choice, checked: choice === qn.default }),
            h("span", { text: choice }),
            choice === qn.default ? h("span", { class: "chip", text: t("team.default") }) : null,
          ),
        ),
      );
    }
    return h(
      "label",
      { class: "field team-question", "data-question": qn.id },
      h("span", { text: qn.text }),
      h("input", { name, class: "input", value: qn.default, placeholder: qn.default ? t("team.answerPlaceholder", { value: qn.default }) : "" }),
    );
  }

  // -------------------------------------------------------------- plan
  function drawPlan(box) {
    if (!team.plan) return;
    const title = [h("span", { text: t("team.plan") }), h("span", { class: "chip team-version", text: t("team.version", { n: team.plan_version }) })];
    const body = renderMarkdownInto(h("div", { class: "msg-text team-plan" }), planText(team.plan));
    if (team.phase === "start" || team.phase === "questions" || team.phase === "plan") {
      box.append(h("h3", { class: "team-plan-title" }, title), body);
      if (canAct("plan")) box.append(planActions());
      return;
    }
    // Why folded once approved: the board is what changes now; the plan stays one click away.
    box.append(h("details", { class: "team-plan-fold" }, h("summary", { class: "team-plan-title" }, title), body));
  }

  function planActions() {
    const approve = h("button", { type: "button", class: "btn btn-primary btn-team-approve", text: t("team.approve") });
    const change = h("button", { type: "button", class: "btn btn-team-change", text: t("team.change"), "aria-expanded": "false" });
    const send = h("button", { type: "submit", class: "btn btn-primary btn-team-nudge", text: t("team.send") });
    const nudge = h(
      "form",
      { class: "team-nudge", hidden: true },
      h("label", { class: "field" }, h("span", { text: t("team.nudge") }), h("textarea", { name: "nudge", class: "input", rows: 3, required: true, placeholder: t("team.nudgePlaceholder") })),
      h("div", { class: "actions" }, send, h("button", { type: "button", class: "btn btn-ghost", text: t("action.cancel"), on: { click: () => toggle(false) } })),
    );
    const box = h("div", { class: "team-plan-actions" }, h("div", { class: "actions" }, approve, change), nudge, h("p", { class: "form-error", role: "alert" }));
    const toggle = (open) => {
      nudge.hidden = !open;
      change.setAttribute("aria-expanded", String(open));
      if (open) nudge.elements.nudge.focus();
    };
    change.addEventListener("click", () => toggle(nudge.hidden));
    approve.addEventListener("click", () => resume({ approve: true }, "approve", box, [approve, change, send]));
    nudge.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) nudge.requestSubmit();
    });
    nudge.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const words = nudge.elements.nudge.value.trim();
      if (words) resume({ nudge: words }, "nudge", box, [approve, change, send]);
    });
    return box;
  }

  // -------------------------------------------------------------- board
  function drawBoard() {
    const box = boxes.board;
    const show = team.phase === "running" || team.phase === "done" || team.phase === "failed" || team.steps.some((s) => s.status !== "pending");
    if (!show || !team.steps.length) {
      clear(box);
      rows.clear();
      signs.delete("board");
      return;
    }
    const ids = JSON.stringify([team.steps.map((s) => s.id), getLang()]);
    if (signs.get("board") !== ids) {
      signs.set("board", ids);
      clear(box);
      rows.clear();
      const body = h("tbody");
      box.append(
        h("h3", { text: t("team.board") }),
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "table team-board" },
            h("thead", {}, h("tr", {}, ["role", "step", "status", "elapsed"].map((k) => h("th", { scope: "col", text: t(`team.col.${k}`) })))),
            body,
          ),
        ),
        h("p", { class: "muted small team-board-hint", text: t("team.boardHint") }),
      );
      for (const s of team.steps) {
        const row = boardRow(s);
        rows.set(s.id, row);
        body.append(row.tr);
      }
    }
    for (const s of team.steps) updateRow(rows.get(s.id), s);
  }

  function boardRow(s) {
    const open = h("button", { type: "button", class: "team-step", text: s.title, "aria-pressed": "false", on: { click: () => select(s.id) } });
    const cells = {
      role: h("td", { class: "team-role" }),
      step: h("td", { class: "team-step-cell" }, open, s.depends_on.length ? h("span", { class: "muted small team-after", text: t("team.after", { steps: listWords(s.depends_on) }) }) : null),
      status: h("td", { class: "team-status-cell" }),
      elapsed: h("td", { class: "muted num team-elapsed" }),
    };
    const tr = h("tr", { "data-step": s.id, on: { click: (ev) => ev.target !== open && select(s.id) } }, Object.values(cells));
    return { tr, cells, open, status: null };
  }

  function updateRow(row, s) {
    row.cells.role.textContent = roleName(s.role || s.owner);
    if (row.status !== s.status) {
      row.status = s.status;
      row.tr.dataset.status = s.status;
      clear(row.cells.status).append(badge(s.status));
    }
    row.cells.elapsed.textContent = elapsed(s.started, s.ended);
    const chosen = selected === s.id;
    row.tr.classList.toggle("team-selected", chosen);
    row.open.setAttribute("aria-pressed", String(chosen));
  }

  function select(stepId) {
    selected = selected === stepId ? null : stepId;
    shown.clear();
    signs.delete("detail");
    drawBoard();
    drawDetail();
  }

  // -------------------------------------------------------------- one specialist
  function drawDetail() {
    const box = boxes.detail;
    const s = team.steps.find((x) => x.id === selected);
    if (!s || !rows.has(s.id)) {
      box.hidden = true;
      clear(box);
      signs.delete("detail");
      return;
    }
    box.hidden = false;
    const sign = JSON.stringify([s.id, s.status, s.session, s.summary, s.error, s.review, getLang()]);
    if (signs.get("detail") !== sign) {
      signs.set("detail", sign);
      shown.clear();
      clear(box);
      append(
        box,
        h(
          "div",
          { class: "team-detail-head" },
          h("h3", { text: t("team.specialist", { role: roleName(s.role || s.owner), step: s.title }) }),
          badge(s.status),
          s.review ? h("span", { class: `badge team-review-${s.review.verdict}`, text: t(`team.review.${s.review.verdict === "PASS" ? "PASS" : "FAIL"}`) }) : null,
        ),
        s.error ? h("p", { class: "task-reason team-error", role: "alert" }, h("strong", { text: `${t("team.error")}${colon()}` }), s.error) : null,
        s.summary ? h("div", { class: "team-summary" }, h("div", { class: "tool-label", text: t("team.summary") }), renderMarkdownInto(h("div", { class: "msg-text" }), s.summary)) : null,
        s.review?.notes && s.review.verdict !== "PASS" ? h("pre", { class: "code team-review-notes", text: s.review.notes }) : null,
        h("div", { class: "thread team-thread", "aria-live": "polite" }, h("p", { class: "muted small", text: t(s.session ? "team.noMessages" : "team.noSession") })),
        s.review?.session
          ? h(
              "div",
              { class: "team-review-box" },
              h("div", { class: "tool-label", text: t("team.reviewerMessages", { n: (s.review.round || 0) + 1 }) }),
              h("div", { class: "thread team-review-thread" }, h("p", { class: "muted small", text: t("team.noMessages") })),
            )
          : null,
      );
    }
    if (s.session && (!shown.has("team-thread") || s.status === "running")) loadMessages(s, s.session, "team-thread", roleName(s.role || s.owner));
    if (s.review?.session && !shown.has("team-review-thread")) loadMessages(s, s.review.session, "team-review-thread", roleName("reviewer"));
  }

  // Why a class per thread: the specialist's own messages, and the reviewer's beside them.
  async function loadMessages(s, session, thread_, speaker) {
    let data;
    try {
      data = await api(`/v1/sessions/${q(session)}/messages?count=30`);
    } catch {
      return; // Why: the next poll tries again; the board says where the step stands
    }
    const thread = $(`.${thread_}`, boxes.detail);
    if (!thread || selected !== s.id) return;
    const messages = Array.isArray(data?.messages) ? data.messages : [];
    const sign = JSON.stringify(messages);
    if (sign === shown.get(thread_) || !messages.length) return;
    shown.set(thread_, sign);
    clear(thread);
    // Why "the lead": in a specialist's session, what comes as the user's words is the lead's;
    // its browser pictures are in its own session (browser-view.js).
    renderMessages(thread, messages, { user: t("team.lead"), assistant: speaker }, session);
  }

  // -------------------------------------------------------------- conflicts, report
  function drawConflicts(conflicts) {
    const box = boxes.conflicts;
    if (!conflicts.length) return;
    box.append(
      h("h3", { text: t("team.conflicts") }),
      h(
        "ul",
        { class: "team-conflict-list" },
        conflicts.map((c) => {
          const title = (sid) => team.steps.find((x) => x.id === sid)?.title || sid;
          const steps = listWords((c.steps?.length ? c.steps : [c.step]).map((sid) => t("team.quoted", { title: title(String(sid)) })));
          const reason = known(`team.conflict.${c.reason}`) ? c.reason : "overlap";
          const kept = Array.isArray(c.kept) ? c.kept : [];
          return h(
            "li",
            { class: "team-conflict", "data-path": c.path },
            h("p", {}, badge("conflict"), " ", t(`team.conflict.${reason}`, { path: c.path, steps }), " ", t("team.conflict.left")),
            kept.length
              ? h("p", { class: "small" }, t("team.conflict.kept"), " ", kept.map((k, i) => [i ? ", " : "", h("code", { text: k })]))
              : h("p", { class: "muted small", text: t("team.conflict.noKept") }),
          );
        }),
      ),
    );
  }

  function drawReport(box) {
    if (!team.report) return;
    box.append(h("h3", { text: t("team.report") }), renderMarkdownInto(h("div", { class: "msg-text team-report-text" }), reportText(team.report)));
  }

  schedule(0);
  return {
    el,
    setStatus(value) {
      if (known_ === false || !value) return;
      const changed = value !== status;
      status = value;
      if (LIVE.has(value) && timer === null) schedule(changed ? 200 : POLL_MS);
      else if (changed && known_) schedule(200); // one more look: the phase may have moved
    },
  };
}
