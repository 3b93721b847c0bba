// The page as text the model can act on: one pass over the DOM, run by page.evaluate.
//
// Why one in-page walk and not page.aria_snapshot(): the accessibility snapshot costs
// ~250 ms on a 2,000-element page, too slow for every step (issue 25). This walk reads
// only what the model needs: visible text, and each interactive element with a short
// ref (data-hearth-ref) that the tools find again with one CSS selector.
//
// Refs grow for the whole browser session (``start`` comes from Python), so a ref of a
// page the tab has left never names an element of the page that replaced it.
//
// Frames (frames.py): the script reads one document. A visible <iframe> gets a mark
// (data-hearth-frame, kept) and its place among the lines; Python runs this script in that
// frame too, with the counters where this one stopped (``start``, ``tables``), and puts
// its lines there. ``refs`` asks for the refs shown (only a frame's: Python keeps
// which frame holds each; the main document's need no list).
(args) => {
  const start = args.start;
  const maxChars = args.maxChars;
  let next = start;
  let size = 0;
  let cut = false;
  let tables = args.tables || 0;
  const shown = args.refs ? [] : null;
  const frames = [];
  const marks = [];
  const seen = new Set();
  const lines = [];
  let line = "";

  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "SVG", "CANVAS"]);
  const BLOCK = new Set([
    "ADDRESS", "ARTICLE", "ASIDE", "BLOCKQUOTE", "BR", "DD", "DETAILS", "DIALOG", "DIV", "DL", "DT",
    "FIELDSET", "FIGCAPTION", "FIGURE", "FOOTER", "FORM", "H1", "H2", "H3", "H4", "H5", "H6",
    "HEADER", "HR", "LI", "MAIN", "NAV", "OL", "P", "PRE", "SECTION", "TABLE", "TR", "UL", "CAPTION",
  ]);
  const LEAF_ROLES = new Set([
    "button", "link", "checkbox", "radio", "tab", "menuitem", "option", "switch", "combobox",
    "textbox", "searchbox", "slider", "spinbutton",
  ]);

  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const short = (text, most) => (text.length > most ? text.slice(0, most - 1) + "…" : text);

  function flush() {
    const text = clean(line);
    line = "";
    if (text) emit(text);
  }

  function emit(text) {
    if (cut) return;
    if (size + text.length + 1 > maxChars) {
      cut = true;
      return;
    }
    lines.push(text);
    size += text.length + 1;
  }

  function interactive(el) {
    const tag = el.tagName;
    if (tag === "A") return el.hasAttribute("href");
    if (tag === "BUTTON" || tag === "SELECT" || tag === "TEXTAREA" || tag === "SUMMARY") return true;
    if (tag === "INPUT") return el.type !== "hidden";
    const role = el.getAttribute("role");
    if (role && LEAF_ROLES.has(role)) return true;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
    return el.hasAttribute("onclick");
  }

  // Why: the text of a link or a button is its name; a clickable <div> may hold more.
  const LEAF_TAGS = new Set(["A", "BUTTON", "SELECT", "TEXTAREA", "INPUT", "SUMMARY"]);
  const leaf = (el) =>
    LEAF_TAGS.has(el.tagName) || el.isContentEditable || LEAF_ROLES.has(el.getAttribute("role") || "");

  function labelOf(el) {
    const aria = el.getAttribute("aria-label");
    if (aria) return clean(aria);
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
        .map((n) => n.textContent).join(" ");
      if (clean(text)) return clean(text);
    }
    if (el.labels && el.labels.length) return clean(el.labels[0].textContent);
    const tag = el.tagName;
    if (tag === "INPUT" && (el.type === "submit" || el.type === "button" || el.type === "reset")) {
      return clean(el.value);
    }
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      return clean(el.getAttribute("placeholder") || el.getAttribute("title") || el.name || "");
    }
    const text = clean(el.textContent);
    if (text) return text;
    const img = el.querySelector("img[alt]");
    return clean((img && img.getAttribute("alt")) || el.getAttribute("title") || "");
  }

  function kindOf(el) {
    const role = el.getAttribute("role");
    if (role) return role;
    const tag = el.tagName;
    if (tag === "A") return "link";
    if (tag === "SELECT") return "select";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "SUMMARY") return "summary";
    if (tag === "BUTTON") return "button";
    if (tag === "INPUT") {
      const type = el.type;
      if (type === "submit" || type === "button" || type === "reset" || type === "image") return "button";
      if (type === "checkbox" || type === "radio" || type === "file") return type;
      if (type === "password") return "password";
      return "textbox";
    }
    return el.isContentEditable ? "textbox" : "clickable";
  }

  function describe(el, ref) {
    const kind = kindOf(el);
    let text = `[${ref}] ${kind} "${short(labelOf(el), 80)}"`;
    const tag = el.tagName;
    if (tag === "A") {
      text += ` -> ${short(el.getAttribute("href") || "", 120)}`;
      if (el.target && el.target !== "_self") text += " (opens a new tab)";
    } else if (kind === "password") {
      // Why: a password the page holds never goes to the model.
      text += el.value ? " (filled, hidden)" : " (empty)";
    } else if (kind === "checkbox" || kind === "radio") {
      text += el.checked ? " checked" : " unchecked";
    } else if (tag === "SELECT") {
      const chosen = el.selectedOptions.length ? clean(el.selectedOptions[0].textContent) : "";
      const options = Array.from(el.options).slice(0, 12).map((o) => clean(o.textContent));
      const more = el.options.length > 12 ? `, … ${el.options.length - 12} more` : "";
      text += ` = "${short(chosen, 60)}" (options: ${options.join(", ")}${more})`;
    } else if (kind === "textbox" && (tag === "INPUT" || tag === "TEXTAREA") && el.value) {
      text += ` = "${short(clean(el.value), 120)}"`;
    }
    if (el.disabled) text += " disabled";
    if (tag === "BUTTON" || kind === "button") {
      if (el.form && (el.type === "submit" || el.type === "image")) text += " (submits a form)";
    }
    return text;
  }

  function visible(el) {
    if (el.checkVisibility) return el.checkVisibility({ visibilityProperty: true });
    return !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  }

  function walk(node) {
    for (let child = node.firstChild; child && !cut; child = child.nextSibling) {
      if (child.nodeType === 3) {
        line += child.nodeValue;
        continue;
      }
      if (child.nodeType !== 1) continue;
      const tag = child.tagName.toUpperCase();
      if (SKIP.has(tag)) continue;
      if (tag === "IFRAME" || tag === "FRAME") {
        if (visible(child)) frame(child);
        continue;
      }
      if (!visible(child)) {
        // Why: a hidden file input behind a styled button is still where uploads go.
        if (tag === "INPUT" && child.type === "file") element(child);
        continue;
      }
      if (interactive(child)) {
        element(child);
        if (leaf(child)) continue;
      }
      const block = BLOCK.has(tag);
      if (block) flush();
      if (tag === "TABLE") {
        tables += 1;
        emit(`(table ${tables}: ${child.rows.length} rows; browser_extract table=${tables} gives its rows)`);
      }
      if (tag === "TD" || tag === "TH") line += " | ";
      if (tag === "LI") line += "- ";
      if (tag.length === 2 && tag[0] === "H" && tag[1] >= "1" && tag[1] <= "6") {
        line += "#".repeat(Number(tag[1])) + " ";
      }
      if (tag === "IMG" && child.alt) line += ` [image: ${clean(child.alt)}] `;
      walk(child);
      if (block) flush();
    }
  }

  function element(el) {
    // Why: a list marker or a cell bar before an element stays on its line.
    const pending = clean(line);
    let mark = "";
    if (/^[-|#\s]*$/.test(pending)) {
      line = "";
      mark = pending ? pending + " " : "";
    } else {
      flush();
    }
    let ref = el.getAttribute("data-hearth-ref");
    if (!ref) {
      ref = String(next);
      next += 1;
      fresh.push([el, ref]);
    }
    emit(mark + describe(el, ref));
    if (shown && !cut) shown.push(Number(ref));
  }

  function frame(el) {
    flush();
    if (cut) return;
    const title = clean(el.getAttribute("title") || el.getAttribute("name") || "");
    const src = el.getAttribute("src") ? el.src : "";
    // Why a mark kept for the iframe's life: Python learns once which frame has it.
    let mark = el.getAttribute("data-hearth-frame");
    if (!mark || seen.has(mark)) {
      window.__hearthFrames = (window.__hearthFrames || 0) + 1;
      mark = String(window.__hearthFrames);
      marks.push([el, mark]);
    }
    seen.add(mark);
    frames.push({ mark: mark, at: lines.length, title: title, src: src });
  }

  // Why the refs are written after the walk: writing an attribute while reading
  // visibility would make the browser recompute styles element by element.
  const fresh = [];
  walk(document.body || document.documentElement);
  flush();
  for (const [el, ref] of fresh) el.setAttribute("data-hearth-ref", ref);
  for (const [el, mark] of marks) el.setAttribute("data-hearth-frame", mark);
  const out = { text: lines.join("\n"), next: next, cut: cut, tables: tables, refs: shown };
  out.title = shown ? document.title : "";
  if (frames.length) {
    out.lines = lines;
    out.frames = frames;
  }
  return out;
}
