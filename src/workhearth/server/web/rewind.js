// Rewind (issue #22): a task's turns, each with "Rewind to here"; the server's dry run
// shown in a dialog (every file with its action, conflicts, its diff) and applied only
// when the user confirms. The server plans and applies; the page never guesses a change.
import { api, q } from "./api.js";
import { clear, h } from "./dom.js";
import { counted, errorText, known } from "./errors.js";
import { t } from "./i18n.js";

const FILES_SHOWN = 6; // per turn in the list; the rest are counted
const DIFFS_OPEN = 3; // a preview of this many files or fewer opens their diffs

/** A rewind's refusal in words: its own wording for the rewind codes, else the page's. */
function rewindError(err) {
  const key = `rewind.error.${err?.code}`;
  if (err?.code && known(key)) return t(key, { paths: "", ...(err.params || {}) });
  return errorText(err);
}

/** A unified diff as lines of text (never markup), each tinted by its first character;
 * its two file-name lines are left out (the row names the file). */
function diffView(diff) {
  const pre = h("pre", { class: "code rewind-diff-code" });
  const lines = diff.replace(/\n$/, "").split("\n");
  if (lines[0]?.startsWith("--- ") && lines[1]?.startsWith("+++ ")) lines.splice(0, 2);
  for (const line of lines) {
    let kind = "ctx";
    if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    pre.append(h("span", { class: `diff-${kind}`, text: `${line}\n` }));
  }
  return pre;
}

function fileRow(file, open) {
  const hasDiff = typeof file.diff === "string" && file.diff.trim() !== "";
  return h(
    "li",
    { class: `rewind-file${file.conflict ? " rewind-conflict" : ""}`, "data-path": file.path, "data-action": file.action },
    h(
      "div",
      { class: "rewind-file-head" },
      h("span", { class: `badge rewind-action-${file.action}`, text: known(`rewind.action.${file.action}`) ? t(`rewind.action.${file.action}`) : file.action }),
      h("code", { text: file.path }),
      file.conflict ? h("span", { class: "badge badge-conflict", text: t("rewind.conflict") }) : null,
    ),
    hasDiff
      ? h("details", { class: "rewind-diff", open }, h("summary", { text: t("rewind.diff") }), diffView(file.diff))
      : h("p", { class: "muted small rewind-nodiff", text: t("rewind.noDiff") }),
  );
}

/** The preview dialog for rewinding to just before ``turn``; ``onDone(plan)`` after applying. */
function preview(sessionId, turn, onDone) {
  const opts = { files_only: false, conversation_only: false };
  let busy = false;
  let refused = null; // the code of the last refused apply, shown with the next preview
  const title = h("h2", { id: "rewind-dialog-title", text: t("rewind.dialogTitle", { n: turn.turn }) });
  const plan = h("div", { class: "rewind-plan", "aria-live": "polite" });
  const error = h("p", { class: "form-error rewind-error", role: "alert" });
  const option = (key, label) =>
    h(
      "label",
      { class: "check" },
      h("input", {
        type: "checkbox",
        name: key,
        on: {
          change: (ev) => {
            opts[key] = ev.currentTarget.checked;
            // Why: files only and conversation only together would rewind nothing.
            if (opts[key]) for (const other of Object.keys(opts)) if (other !== key) setOption(other, false);
            refused = null;
            load();
          },
        },
      }),
      h("span", { text: t(label) }),
    );
  const options = h("div", { class: "rewind-options" }, option("files_only", "rewind.filesOnly"), option("conversation_only", "rewind.conversationOnly"));
  const setOption = (key, value) => {
    opts[key] = value;
    options.querySelector(`input[name="${key}"]`).checked = value;
  };
  const cancel = h("button", { type: "button", class: "btn rewind-cancel", text: t("action.cancel"), autofocus: true, on: { click: () => dialog.close() } });
  const force = h("button", { type: "button", class: "btn btn-danger rewind-force", hidden: true, on: { click: () => apply(true) } });
  const confirm = h("button", { type: "button", class: "btn btn-primary rewind-apply", text: t("rewind.apply"), disabled: true, on: { click: () => apply(false) } });
  const dialog = h(
    "dialog",
    { class: "rewind-dialog", "aria-labelledby": "rewind-dialog-title" },
    h("div", { class: "rewind-dialog-head" }, title, h("p", { class: "rewind-prompt", text: turn.prompt })),
    options,
    error,
    plan,
    h("div", { class: "actions rewind-buttons" }, cancel, force, confirm),
  );
  const setBusy = (value) => {
    busy = value;
    for (const el of dialog.querySelectorAll("button, input")) el.disabled = value;
  };

  const show = (data) => {
    clear(plan);
    const conflicts = data.files.filter((f) => f.conflict).length;
    if (conflicts) plan.append(h("p", { class: "form-warn rewind-warn", text: counted("rewind.conflicts", conflicts) }));
    plan.append(h("p", { class: "rewind-conversation", text: t(data.conversation ? "rewind.willConversation" : "rewind.keepsConversation") }));
    if (opts.conversation_only) plan.append(h("p", { class: "muted", text: t("rewind.filesKept") }));
    else if (!data.files.length) plan.append(h("p", { class: "muted", text: t("rewind.willNoFiles") }));
    else {
      plan.append(
        h("p", { class: "rewind-count", text: counted("rewind.willFiles", data.files.length) }),
        h(
          "ul",
          { class: "rewind-files" },
          // Why conflicts first: they are what the user must decide about.
          [...data.files.filter((f) => f.conflict), ...data.files.filter((f) => !f.conflict)].map((f) => fileRow(f, data.files.length <= DIFFS_OPEN)),
        ),
      );
    }
    // Why no plain Rewind over conflicts: the server would refuse it; the choice left is
    // to keep everything, or to rewind with the outside versions kept in the trash.
    confirm.hidden = conflicts > 0;
    confirm.disabled = false;
    force.hidden = !conflicts && refused !== "rewind_expired";
    force.disabled = false;
    force.textContent = t(conflicts ? "rewind.force" : "rewind.forceExpired");
  };

  let loading = 0;
  async function load() {
    const mine = ++loading;
    // Why only the rewind buttons: a checkbox or Cancel that has the focus keeps it.
    confirm.disabled = true;
    force.disabled = true;
    clear(plan).append(h("p", { class: "muted", text: t("rewind.loading") }));
    if (!refused) error.textContent = "";
    try {
      const data = await api(`/v1/sessions/${q(sessionId)}/rewind`, { method: "POST", body: { to: turn.turn, dry_run: true, ...opts } });
      if (mine === loading) show(data);
    } catch (err) {
      if (mine !== loading) return;
      clear(plan);
      error.textContent = rewindError(err);
    }
  }

  async function apply(forced) {
    setBusy(true);
    error.textContent = "";
    const working = h("p", { class: "muted rewind-working", text: t("rewind.working") });
    plan.append(working);
    try {
      const data = await api(`/v1/sessions/${q(sessionId)}/rewind`, { method: "POST", body: { to: turn.turn, force: forced, ...opts } });
      busy = false;
      dialog.close();
      onDone(data, opts);
    } catch (err) {
      working.remove();
      setBusy(false);
      cancel.focus(); // Why: the button pressed may be hidden by the new preview
      refused = err.code || "error";
      error.textContent = rewindError(err);
      // Why again: what is on disk changed since the preview; show it as it is now.
      if (err.code === "rewind_conflict" || err.code === "rewind_expired") load();
    }
  }

  dialog.addEventListener("cancel", (ev) => {
    if (busy) ev.preventDefault(); // Why: a rewind under way finishes; its result is shown
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  load();
}

function doneText(to, data, opts) {
  const parts = [t("rewind.done", { n: to })];
  if (data.files.length) parts.push(counted("rewind.doneFiles", data.files.length));
  else if (!opts.conversation_only) parts.push(t("rewind.doneNoFiles"));
  parts.push(t(data.conversation ? "rewind.doneConversation" : "rewind.doneConversationKept"));
  return parts.join(t("rewind.sentenceGap")); // Chinese sentences need no space
}

function turnRow(turn, running, onRewind) {
  const files = turn.files.slice(0, FILES_SHOWN);
  const more = turn.files.length - files.length;
  return h(
    "li",
    { class: `turn${turn.undone ? " turn-undone" : ""}`, "data-seq": turn.seq, "data-turn": turn.turn ?? "" },
    h(
      "div",
      { class: "turn-head" },
      turn.undone
        ? h("span", { class: "badge turn-badge badge-undone", title: t("rewind.undoneHint"), text: t("rewind.undoneTurn") })
        : h("span", { class: "badge turn-badge", text: t("rewind.turn", { n: turn.turn }) }),
      h("span", { class: "turn-prompt", title: turn.prompt, text: turn.prompt }),
      turn.undone
        ? null
        : h("button", {
            type: "button",
            class: "btn btn-small btn-rewind",
            text: t("rewind.here"),
            "aria-label": t("rewind.hereLabel", { n: turn.turn }),
            title: running ? t("rewind.runningHint") : null,
            disabled: running,
            on: { click: () => onRewind(turn) },
          }),
    ),
    h(
      "div",
      { class: "turn-files" },
      files.length ? files.map((path) => h("code", { class: "chip turn-file", text: path })) : h("span", { class: "muted small", text: t("rewind.noFiles") }),
      more > 0 ? h("span", { class: "muted small", text: t("rewind.moreFiles", { n: more }) }) : null,
      turn.files_undone ? h("span", { class: "badge badge-files-undone", text: t("rewind.filesUndone") }) : null,
    ),
  );
}

/**
 * The turns of one task: ``{ el, refresh(), setRunning(running) }``; the task view calls
 * ``setRunning`` at each status (no rewind is offered while the task runs or waits).
 * ``onRewound(plan)`` runs after a rewind was applied (the task view reloads its thread).
 */
export function turnsPanel(sessionId, { onRewound } = {}) {
  const list = h("ol", { class: "turns" });
  const note = h("p", { class: "rewind-done", role: "status", hidden: true });
  const problem = h("p", { class: "form-error" });
  const el = h(
    "section",
    { class: "turns-box", "aria-labelledby": "turns-title", hidden: true },
    h("h3", { id: "turns-title", text: t("rewind.title") }),
    h("p", { class: "muted small turns-hint", text: t("rewind.hint") }),
    note,
    problem,
    list,
  );
  let running = true; // Why: until the task's status is known, no rewind is offered
  let turns = [];
  let token = 0;

  const rewound = async (turn, data, opts) => {
    const text = doneText(turn.turn, data, opts);
    note.textContent = text;
    note.hidden = false;
    await refresh();
    onRewound?.(data);
  };
  const render = () => {
    clear(list);
    for (const turn of turns) list.append(turnRow(turn, running, (chosen) => preview(sessionId, chosen, (data, opts) => rewound(chosen, data, opts))));
  };

  async function refresh() {
    const mine = ++token;
    try {
      const data = await api(`/v1/sessions/${q(sessionId)}/turns`);
      if (mine !== token) return; // a newer refresh is on its way
      turns = Array.isArray(data?.turns) ? data.turns : [];
      problem.textContent = "";
    } catch (err) {
      if (mine !== token) return;
      turns = [];
      problem.textContent = t("rewind.loadFailed", { detail: errorText(err) });
    }
    el.hidden = !turns.length && !problem.textContent;
    render();
  }

  /** The task's status changed: its turns are read again (a new prompt, a finished run). */
  function setRunning(value) {
    running = value;
    refresh();
  }

  return { el, refresh, setRunning };
}
