// The workbench shell: language, sidebar routing (#/view/arg), toasts, sign-in notice.
import { api } from "./api.js";
import { $ } from "./dom.js";
import { applyStatic, getLang, setLang, t } from "./i18n.js";
import * as chat from "./chat.js";
import * as memory from "./memory.js";
import * as skills from "./skills.js";
import * as tasks from "./tasks.js";
import * as trash from "./trash.js";
import { info } from "./ui.js";

const VIEWS = { tasks, chat, memory, skills, trash };
let current = null;

function route() {
  const [, name = "tasks", ...rest] = (location.hash || "#/tasks").split("/");
  const view = VIEWS[name] ? name : "tasks";
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  for (const link of document.querySelectorAll(".nav a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (current && current !== view) {
    VIEWS[current].hide?.();
    $(`#view-${current}`).hidden = true;
  }
  current = view;
  const section = $(`#view-${view}`);
  section.hidden = false;
  $("#view-title").textContent = t(`nav.${view}`);
  document.title = `${t(`nav.${view}`)} · workhearth`;
  VIEWS[view].show(section, arg);
}

async function loadInfo() {
  try {
    const data = await api("/v1/info");
    Object.assign(info, data || {});
    $("#info-workspace").textContent = info.workspace || "";
    $("#info-workspace").title = info.workspace || "";
    $("#info-version").textContent = info.version ? `v${info.version}` : "";
  } catch {
    // Why: the sign-in notice (on 401) or the view's own error says what went wrong.
  }
}

function init() {
  const select = $("#lang-select");
  select.value = getLang();
  applyStatic(document);
  select.addEventListener("change", () => {
    setLang(select.value);
    applyStatic(document);
    route();
  });
  document.addEventListener("hearth:unauthorized", () => {
    $("#signed-out").hidden = false;
  });
  window.addEventListener("hashchange", route);
  // Why: focus the view after a sidebar click so keyboard users land in its content.
  for (const link of document.querySelectorAll(".nav a")) {
    link.addEventListener("click", () => setTimeout(() => $("#main").focus({ preventScroll: true }), 0));
  }
  loadInfo().then(route);
}

init();
