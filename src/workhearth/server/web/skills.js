// Skills gallery: cards with bilingual example tasks; a form for an example's variables,
// a preview of the rendered prompt, and a button that starts the task.
import { api, listOf, q } from "./api.js";
import { clear, h } from "./dom.js";
import { errorText, wordOr } from "./errors.js";
import { getLang, t } from "./i18n.js";
import { trustBanner } from "./trust.js";
import { errorToast, info } from "./ui.js";

let skills = [];

function local(map) {
  if (!map) return "";
  if (typeof map === "string") return map;
  return map[getLang()] || map.en || map.zh || Object.values(map)[0] || "";
}

// A file variable suggests the workspace's files (GET /v1/files, the same confined walk
// as the agent's list_dir), refreshed as the path is typed.
let pickers = 0;
const FILES_SHOWN = 50;

function filePicker(input) {
  pickers += 1;
  const list = h("datalist", { id: `file-choices-${pickers}` });
  input.setAttribute("list", list.id);
  input.setAttribute("autocomplete", "off");
  let timer = null;
  let asked = null;
  const fill = async () => {
    const prefix = input.value.includes("/") ? input.value.slice(0, input.value.lastIndexOf("/") + 1) : "";
    if (prefix === asked) return;
    asked = prefix;
    try {
      const data = await api(`/v1/files?prefix=${q(prefix)}&limit=${FILES_SHOWN}`);
      if (asked !== prefix) return;
      clear(list);
      for (const path of data.files || []) list.appendChild(h("option", { value: path }));
    } catch {
      asked = null; // Why: suggestions are a help; the field still takes any path.
    }
  };
  input.addEventListener("focus", fill);
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(fill, 150);
  });
  return list;
}

function field(variable) {
  const label = h("span", { text: local(variable.label) || variable.name }, variable.required ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null);
  const hint = local(variable.description);
  let input;
  if (variable.type === "choice") {
    input = h("select", { class: "input", name: variable.name, required: variable.required }, (variable.choices || []).map((c) => h("option", { value: c, text: c })));
    if (variable.default) input.value = variable.default;
  } else {
    input = h("input", {
      class: variable.type === "file" ? "input mono" : "input",
      name: variable.name,
      type: variable.type === "number" ? "number" : "text",
      step: variable.type === "number" ? "any" : undefined,
      required: variable.required,
      value: variable.default ?? "",
      placeholder: variable.type === "file" ? t("skills.filePlaceholder") : "",
    });
  }
  const choices = variable.type === "file" ? filePicker(input) : null;
  return h("label", { class: "field" }, label, input, choices, hint ? h("span", { class: "muted small", text: hint }) : null);
}

function values(form, example) {
  const out = {};
  for (const v of example.variables || []) {
    const value = form.elements[v.name]?.value ?? "";
    if (value !== "") out[v.name] = value;
  }
  return out;
}

function openExample(panel, skill, example) {
  clear(panel);
  panel.hidden = false;
  const preview = h("pre", { class: "code preview", hidden: true, "aria-live": "polite" });
  const errorBox = h("p", { class: "form-error", role: "alert" });
  const mode = h("select", { class: "input", name: "__mode" }, ["agent", "ask", "quest"].map((m) => h("option", { value: m, text: t(`mode.${m}`) })));
  const form = h(
    "form",
    { class: "card form example-form", "aria-label": local(example.title) },
    h("div", { class: "panel-head" }, h("h3", { text: local(example.title) }), h("span", { class: "chip", text: skill.name })),
    h("p", { class: "muted", text: local(example.description) }),
    (example.variables || []).map(field),
    h("label", { class: "field" }, h("span", { text: t("chat.mode") }), mode),
    errorBox,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "btn btn-preview", text: t("skills.preview") }),
      h("button", { type: "submit", class: "btn btn-primary btn-start", text: t("skills.start") }),
      h("button", { type: "button", class: "btn btn-ghost btn-close", text: t("action.cancel") }),
    ),
    preview,
  );
  const render = async () => {
    errorBox.textContent = "";
    try {
      const data = await api(`/v1/skills/${q(skill.name)}/render`, { method: "POST", body: { example: example.id, values: values(form, example) } });
      preview.textContent = data.prompt;
      preview.hidden = false;
      return data.prompt;
    } catch (err) {
      errorBox.textContent = errorText(err, (name) => local(example.variables?.find((v) => v.name === name)?.label));
      return null;
    }
  };
  form.querySelector(".btn-preview").addEventListener("click", render);
  const close = () => {
    panel.hidden = true;
    clear(panel);
    document.querySelector(`[data-example="${CSS.escape(`${skill.name}/${example.id}`)}"]`)?.focus();
  };
  form.querySelector(".btn-close").addEventListener("click", close);
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") close();
  });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // Why first: a missing or wrong field is shown by the preview's own check.
    if ((await render()) === null) return;
    try {
      // Why: the server renders the example itself; a task text beside it is refused.
      const body = { skill: skill.name, example: example.id, values: values(form, example), mode: mode.value };
      if (info.workspace) body.workspace = info.workspace;
      const started = await api("/v1/tasks", { method: "POST", body });
      location.hash = `#/chat/${encodeURIComponent(started.session_id)}`;
    } catch (err) {
      errorBox.textContent = errorText(err, (name) => local(example.variables?.find((v) => v.name === name)?.label));
    }
  });
  panel.append(form);
  panel.scrollIntoView({ block: "nearest" });
  (form.querySelector("input, select") || form.querySelector("button")).focus();
}

function card(skill, panel) {
  const examples = skill.examples || [];
  return h(
    "li",
    { class: "card skill-card", "data-skill": skill.name },
    h("div", { class: "panel-head" }, h("h3", { text: skill.name }), h("span", { class: "muted small", text: wordOr(`skills.source.${skill.source}`, skill.source || "") })),
    h("p", { class: "skill-desc", text: local(skill.descriptions) || skill.description || "" }),
    skill.status === "broken" ? h("p", { class: "form-error", text: (skill.problems || []).join("; ") }) : null,
    examples.length
      ? h(
          "ul",
          { class: "examples", "aria-label": t("skills.examples") },
          examples.map((ex) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "example", "data-example": `${skill.name}/${ex.id}`, on: { click: () => openExample(panel, skill, ex) } },
                h("span", { class: "example-title", text: local(ex.title) }),
                h("span", { class: "muted small", text: local(ex.description) }),
              ),
            ),
          ),
        )
      : h("p", { class: "muted small", text: t("skills.noExamples") }),
  );
}

export async function show(section) {
  clear(section);
  const grid = h("ul", { class: "grid", "aria-label": t("nav.skills") });
  const panel = h("div", { class: "example-panel", hidden: true });
  const summary = h("p", { class: "muted", "aria-live": "polite", text: t("loading") });
  const trust = h("div", { class: "trust-host" });
  section.append(trust, h("p", { class: "muted", text: t("skills.hint") }), summary, panel, grid);
  trustBanner(trust, () => show(section));
  try {
    const listed = listOf(await api("/v1/skills"), "skills");
    skills = await Promise.all(
      listed.map(async (s) => {
        if (s.status === "broken") return s;
        try {
          return { ...s, ...(await api(`/v1/skills/${q(s.name)}`)) };
        } catch {
          return s;
        }
      }),
    );
  } catch (err) {
    errorToast(err);
    skills = [];
  }
  summary.textContent = skills.length ? "" : t("skills.empty");
  // Why: skills with ready examples first; that is what a person can start right away.
  const sorted = [...skills].sort((a, b) => (b.examples?.length ? 1 : 0) - (a.examples?.length ? 1 : 0) || a.name.localeCompare(b.name));
  for (const skill of sorted) grid.appendChild(card(skill, panel));
}
