// Shared bits of the page: server info, toasts, small formatters.
import { $, h } from "./dom.js";
import { getLang, t } from "./i18n.js";

export const info = { workspace: "", version: "", home: "" };

/** A short message at the bottom; ``action`` adds one button (e.g. Undo). */
export function toast(message, { action, duration = 4000, kind = "" } = {}) {
  const box = $("#toasts");
  const el = h("div", { class: `toast ${kind}` }, h("span", { text: message }));
  let timer = null;
  const dismiss = () => {
    clearTimeout(timer);
    el.remove();
  };
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
  box.appendChild(el);
  timer = setTimeout(dismiss, duration);
  return { dismiss, el };
}

export function errorToast(err) {
  return toast(t("error.prefix", { detail: err.message || String(err) }), { kind: "toast-error", duration: 7000 });
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
