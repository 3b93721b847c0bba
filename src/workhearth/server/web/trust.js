// The trust question on the page (DESIGN §5 Trust): what this folder brings (.mcp.json,
// skills, agents) loads only once the user trusts it. The banner shows each MCP server's
// command line as written and the variables it would receive, and trusts exactly what
// it showed (the hashes GET /v1/trust gave), so a file changed meanwhile stays untrusted.
import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { t } from "./i18n.js";
import { errorToast, toast } from "./ui.js";

function serverLines(state) {
  return (state.servers || []).map((s) =>
    h(
      "li",
      {},
      h("strong", { text: `${s.name}: ` }),
      h("code", { class: "mono", text: s.command_line }),
      s.receives.length ? h("div", { class: "muted small", text: `${t("trust.receives")} ${s.receives.join(", ")}` }) : null,
      s.adds.length ? h("div", { class: "muted small", text: `${t("trust.adds")} ${s.adds.join("; ")}` }) : null,
    ),
  );
}

// A banner in `host` while the workspace brings something untrusted; `onTrusted` reloads.
export async function trustBanner(host, onTrusted) {
  clear(host);
  let state;
  try {
    state = await api("/v1/trust");
  } catch {
    return; // Why: the banner is advice; the rest of the page works without it.
  }
  if (!state.pending.length) return;
  const changed = state.items.some((i) => i.status === "changed");
  const yes = h("button", { class: "btn btn-primary", type: "button", text: t("trust.yes") });
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      await api("/v1/trust", { method: "POST", body: { hashes: state.hashes } });
      toast(t("trust.done"));
      clear(host);
      onTrusted?.();
    } catch (err) {
      yes.disabled = false;
      errorToast(err);
    }
  });
  host.appendChild(
    h(
      "div",
      { class: "notice trust-notice", role: "region", "aria-label": t("trust.title") },
      h("p", {}, h("strong", { text: changed ? t("trust.changed") : t("trust.title") }), " ", h("span", { class: "mono", text: state.folder })),
      h("ul", {}, state.pending.map((item) => h("li", { class: "mono", text: item }))),
      state.servers.length ? h("p", { text: t("trust.servers") }) : null,
      state.servers.length ? h("ul", {}, serverLines(state)) : null,
      state.mcp_json_unreadable ? h("p", { class: "muted small", text: t("trust.unreadable") }) : null,
      h("p", { class: "muted small", text: t("trust.warning") }),
      h("p", {}, yes),
    ),
  );
}
