// Errors worded for people, in the page's language, by the code the server gives
// (REST {detail, code, params}, DESIGN §6). The English ``detail`` is shown only when a
// code has no words (a server newer than the page); the words live in strings-errors.js.
import { t } from "./i18n.js";

export function known(key) {
  return t(key) !== key;
}

/** A field's name for people: ``tags.3`` -> "tags" -> its words, else the name itself. */
function fieldWord(field, name) {
  const raw = String(field);
  const named = name ? name(raw) : "";
  if (named) return named;
  const base = raw.split(".")[0];
  return known(`error.field.${base}`) ? t(`error.field.${base}`) : raw;
}

/**
 * The words for an error (an ApiError, or anything thrown).
 * ``name(field)`` may give a field's label (a skill form names its variables).
 */
export function errorText(err, name) {
  if (!err) return t("error.code.error", { detail: "" });
  const code = err.code || (err.status >= 500 ? "server_error" : "");
  const params = { ...(err.params || {}), detail: err.message || String(err) };
  if ("field" in params) params.field = fieldWord(params.field, name);
  if (code && known(`error.code.${code}`)) return t(`error.code.${code}`, params);
  return err.message || String(err);
}

/** A count in words: ``key.one`` when n is 1 (and that string exists), else ``key``. */
export function counted(key, n, vars = {}) {
  const one = `${key}.one`;
  return t(n === 1 && known(one) ? one : key, { n, ...vars });
}

/** An audit record's decision, outcome and summary, in the page's language. */
export function auditWords(record) {
  const decision = String(record.decision || "");
  const outcome = String(record.outcome || "");
  const fixed = `audit.fixed.${outcome === "started" ? "started" : decision}`;
  return {
    decision: known(`audit.decision.${decision}`) ? t(`audit.decision.${decision}`) : decision,
    outcome: known(`audit.result.${outcome}`) ? t(`audit.result.${outcome}`) : outcome,
    // Why: these summaries are fixed words the audit writes (agent/audit.py PEOPLE_SUMMARY,
    // STARTED_SUMMARY); any other summary is the tool's own output, shown as it is.
    summary: known(fixed) ? t(fixed) : null,
  };
}

/** Why a task ended, for a ``done`` event {reason, message}: its limits by code, else its message. */
export function outcomeText(end) {
  if (!end || !end.message) return "";
  const key = `outcome.${end.reason}`;
  return known(key) ? t(key, { message: end.message }) : end.message;
}

/** The words under ``key``, or ``fallback`` when there are none (a value newer than the page). */
export function wordOr(key, fallback) {
  return known(key) ? t(key) : fallback;
}
