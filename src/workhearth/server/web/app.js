// The workbench shell: language, sidebar routing (#/view/arg), toasts, sign-in notice.
import { api } from "./api.js";
import { $, clear, h } from "./dom.js";
import { applyStatic, getLang, setLang, t } from "./i18n.js";
import * as chat from "./chat.js";
import * as memory from "./memory.js";
import * as skills from "./skills.js";
import * as tasks from "./tasks.js";
import * as trash from "./trash.js";
import * as wiki from "./wiki.js";
import { info } from "./ui.js";

const VIEWS = { tasks, chat, memory, wiki, skills, trash };
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

// ------------------------------------------------------------ connection
// What the page says about its link to the server, as it happens: lost (and
// reconnecting), back, or signed out (with the way to sign in again).
let banner = null;
let connState = "ok";
let probeTimer = null;

function connection() {
  banner = h("div", { id: "connection", class: "conn", role: "status", "aria-live": "assertive", hidden: true });
  $("#main").prepend(banner);
  const out = h("button", { type: "button", class: "btn btn-ghost btn-small btn-signout", "data-i18n": "signout", text: t("signout") });
  out.addEventListener("click", async () => {
    try {
      await api("/logout", { method: "POST" });
    } finally {
      location.assign("/");
    }
  });
  $(".topbar").append(out);
}

async function probe() {
  clearTimeout(probeTimer);
  try {
    await api("/v1/info");
    say("ok");
  } catch (err) {
    if (err.status === 401) say("signin");
    else probeTimer = setTimeout(probe, 2000);
  }
}

function say(state) {
  if (!banner || state === connState) return;
  const was = connState;
  connState = state;
  clear(banner);
  banner.className = `conn conn-${state}`;
  if (state === "lost") {
    banner.append(h("span", { class: "spinner", "aria-hidden": "true" }), h("span", { text: t("conn.lost") }));
    banner.hidden = false;
    probe();
  } else if (state === "signin") {
    clearTimeout(probeTimer);
    banner.append(h("span", { text: t("conn.signin") }), " ", h("a", { class: "btn btn-small btn-primary", href: "/", text: t("signin.again") }));
    banner.hidden = false;
  } else {
    clearTimeout(probeTimer);
    banner.append(h("span", { text: t("conn.back") }));
    banner.hidden = was === "ok";
    setTimeout(() => {
      if (connState === "ok") banner.hidden = true;
    }, 3000);
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
  connection();
  document.addEventListener("hearth:unauthorized", () => say("signin"));
  document.addEventListener("hearth:connection", (ev) => say(ev.detail));
  window.addEventListener("hashchange", route);
  // Why: focus the view after a sidebar click so keyboard users land in its content.
  for (const link of document.querySelectorAll(".nav a")) {
    link.addEventListener("click", () => setTimeout(() => $("#main").focus({ preventScroll: true }), 0));
  }
  loadInfo().then(route);
}

init();
