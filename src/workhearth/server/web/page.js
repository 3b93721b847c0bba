// The pages shown outside the workbench: sign in (a stranger, a used link, a wrong
// token, signed out) and errors for people (not found, refused). The server fills
// body[data-page|data-reason|data-status] from a fixed set of words; no user input.
import { $ } from "./dom.js";
import { applyStatic, getLang, setLang, t } from "./i18n.js";

const REASONS = new Set(["expired", "wrong", "signed_out", "restarted"]);

function render() {
  const { page, reason, status } = document.body.dataset;
  applyStatic(document);
  if (page === "signin") {
    $("#signin").hidden = false;
    const note = $("#signin-reason");
    note.hidden = !REASONS.has(reason);
    if (!note.hidden) note.textContent = t(`signin.reason.${reason}`);
    document.title = `${t("signin.title")} · workhearth`;
  } else {
    $("#error").hidden = false;
    const key = ["404", "405", "403", "413", "421"].includes(status) ? status : "other";
    $("#error-title").textContent = t(`page.error.${key}.title`, { status });
    $("#error-body").textContent = t(`page.error.${key}.body`, { status });
    document.title = `${t(`page.error.${key}.title`, { status })} · workhearth`;
  }
}

const select = $("#lang-select");
select.value = getLang();
select.addEventListener("change", () => {
  setLang(select.value);
  render();
});
render();
