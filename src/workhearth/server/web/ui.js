// Shared bits of the page: server info, toasts, small formatters.
import { $, h } from "./dom.js";
import { errorText } from "./errors.js";
import { getLang, t } from "./i18n.js";

export const info = { workspace: "", version: "", home: "" };

// Why a cap: stacked toasts must never cover more than a corner of the list; the oldest
// one that nobody is holding goes first (as if its time had run out).
export const MAX_TOASTS = 3;
const expirers = new WeakMap();

/** A short message in the corner; ``action`` adds one button (e.g. Undo).
 * It stays while the pointer is over it or focus is inside it, and its time starts again
 * when both leave. ``onExpire`` runs when it goes by itself (time out, or pushed out by
 * newer ones), not when its action is used or ``dismiss()`` is called. */
export function toast(message, { action, duration = 4000, kind = "", onExpire } = {}) {
  const box = $("#toasts");
  const el = h("div", { class: `toast ${kind}` }, h("span", { text: message }));
  let timer = null;
  let hovered = false;
  const held = () => hovered || el.contains(document.activeElement);
  const close = (expired) => {
    clearTimeout(timer);
    if (!el.isConnected) return;
    el.remove();
    if (expired) onExpire?.();
  };
  const dismiss = () => close(false);
  const expire = () => close(true);
  const restart = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!held()) expire();
    }, duration);
  };
  el.addEventListener("mouseenter", () => {
    hovered = true;
    clearTimeout(timer);
  });
  el.addEventListener("mouseleave", () => {
    hovered = false;
    if (!held()) restart();
  });
  el.addEventListener("focusin", () => clearTimeout(timer));
  el.addEventListener("focusout", (ev) => {
    if (!el.contains(ev.relatedTarget) && !hovered) restart();
  });
  if (action) {
    el.appendChild(
      h("button", {
        type: "button",
        class: "btn btn-small btn-inverse",
        text: action.label,
        on: {
          click: () => {
            dismiss();
            action.fn();
          },
        },
      }),
    );
  }
  expirers.set(el, expire);
  box.appendChild(el);
  for (const old of [...box.children].slice(0, -MAX_TOASTS)) {
    if (!old.matches(":hover") && !old.contains(document.activeElement)) expirers.get(old)?.();
  }
  restart();
  return { dismiss, el };
}

export function errorToast(err) {
  return toast(t("error.prefix", { detail: errorText(err) }), { kind: "toast-error", duration: 7000 });
}

/** "3 minutes ago" in the page's language, from a Unix time in seconds. */
export function ago(seconds) {
  if (!seconds) return "";
  const diff = seconds - Date.now() / 1000;
  const rtf = new Intl.RelativeTimeFormat(getLang() === "zh" ? "zh-CN" : "en", { numeric: "auto" });
  const abs = Math.abs(diff);
  if (abs < 60) return rtf.format(Math.round(diff), "second");
  if (abs < 3600) return rtf.format(Math.round(diff / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(diff / 3600), "hour");
  return rtf.format(Math.round(diff / 86400), "day");
}

export function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString(getLang() === "zh" ? "zh-CN" : "en");
}

export function statusBadge(status) {
  const s = status || "done";
  return h("span", { class: `badge badge-${s}`, text: t(`status.${s}`) });
}

const SEARCH_DELAY_MS = 250;

/** A search box (``attrs`` on the input): ``onQuery(text)`` as it is typed, ``run()``
 * once typing pauses, at once on Enter, and on Escape, which empties it.
 * ``cancel()`` drops a run still waiting (e.g. when the view is left). */
export function searchBox(attrs, { onQuery, run }) {
  let timer = null;
  const box = h("input", { class: "input", type: "search", autocomplete: "off", ...attrs });
  const cancel = () => clearTimeout(timer);
  const now = () => {
    cancel();
    run();
  };
  box.addEventListener("input", () => {
    onQuery(box.value);
    cancel();
    timer = setTimeout(run, SEARCH_DELAY_MS);
  });
  box.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") now();
    else if (ev.key === "Escape" && box.value) {
      box.value = "";
      onQuery("");
      now();
    }
  });
  return { box, cancel };
}
