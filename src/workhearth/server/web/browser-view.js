// What the user sees of the agent's browser (issue 25): after each browser action that
// changes the page, a thumbnail of the page in the task stream, bigger on click (a dialog).
// Live, the tool_result event names the picture (``screenshot``) and its caption (``line``);
// in a stored transcript the result's last line names the picture (``Screenshot:
// tool-outputs/NAME``) and the result block keeps the caption (``line``), so a reload, a
// session opened later and a team's specialist (team.js) show the same.
import { q } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

// The line after an action's result, or browser_screenshot's own "Saved a screenshot … at …".
const NAME = /^(?:Screenshot: |Saved a screenshot .* at .*\/)tool-outputs\/([A-Za-z0-9_\-][A-Za-z0-9_.\-]*\.(?:jpg|png))$/m;
// Why retries: the picture is taken just after the action's result (off its path), so a
// thumbnail can ask before the file is there.
const RETRIES = 4;

/** The picture a browser tool's stored result names, or "". */
export function screenshotIn(text) {
  const found = NAME.exec(String(text || ""));
  return found ? found[1] : "";
}

/** A thumbnail of ``name`` (a session's screenshot) right after the tool call ``details``. */
export function showScreenshot(details, sessionId, name, line = "") {
  if (!sessionId || !name || !details?.parentNode) return;
  const src = `/v1/sessions/${q(sessionId)}/screenshots/${q(name)}`;
  const alt = line ? t("browser.shotOf", { line }) : t("browser.shot");
  const img = h("img", { class: "browser-thumb", src, alt, loading: "lazy" });
  let tries = 0;
  img.addEventListener("error", () => {
    if (++tries > RETRIES) return void button.remove();
    setTimeout(() => (img.src = `${src}?try=${tries}`), 300 * tries);
  });
  const button = h("button", { type: "button", class: "browser-shot", title: t("browser.bigger"), "data-shot": name, on: { click: () => openBig(src, alt) } }, img);
  if (line) button.append(h("span", { class: "browser-line", text: line }));
  details.after(button);
}

function openBig(src, alt) {
  const close = h("button", { type: "button", class: "btn btn-small", text: t("browser.close"), autofocus: true, on: { click: () => dialog.close() } });
  const dialog = h(
    "dialog",
    { class: "browser-dialog", "aria-label": alt },
    h("img", { class: "browser-big", src, alt }),
    h("div", { class: "browser-dialog-foot" }, h("span", { class: "muted small", text: alt }), close),
  );
  // Why a click on the backdrop closes it: the dialog itself is the backdrop's target.
  dialog.addEventListener("click", (ev) => ev.target === dialog && dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
