// The agent's Markdown, rendered safely: markdown-it (raw HTML off) makes the HTML, DOMPurify keeps
// only plain formatting and returns a DocumentFragment, so the page is never handed an HTML string.
// Both libraries are vendored in ./vendor/ (versions, hashes and licences in vendor/README.md).

import MarkdownIt from "./vendor/markdown-it/markdown-it.esm.min.js";
import createDOMPurify from "./vendor/dompurify/purify.es.js";

const LINK_PROTOCOLS = /^(?:https?|mailto):/i;

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote",
  "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "a",
  "table", "thead", "tbody", "tr", "th", "td",
];
const ALLOWED_ATTR = ["href", "title", "class", "start"];

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });

// Why: only web and mail links; a relative link would open a page of this server, and
// javascript:/data:/file: must never reach an href. A refused link stays as its plain text.
md.validateLink = (url) => LINK_PROTOCOLS.test(url.trim());

// Why: an image would load from any host the model names (a tracking pixel, a leak of what the
// user reads); show it as a link to the image instead, with its alt text as the words.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token.attrGet("src") || "";
  const alt = token.content || src;
  if (!LINK_PROTOCOLS.test(src)) return md.utils.escapeHtml(alt);
  return `<a href="${md.utils.escapeHtml(src)}">${md.utils.escapeHtml(alt)}</a>`;
};

// Why: markdown-it aligns table cells with a style attribute, which the page's CSP
// (style-src 'self') refuses; a class does the same through markdown.css.
for (const name of ["th_open", "td_open"]) {
  md.renderer.rules[name] = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const align = /text-align:\s*(left|center|right)/.exec(token.attrGet("style") || "");
    if (token.attrs) token.attrs = token.attrs.filter(([key]) => key !== "style");
    if (align) token.attrJoin("class", `md-align-${align[1]}`);
    return self.renderToken(tokens, idx, options);
  };
}

// Why an instance of our own: hooks on the shared default instance would leak into any other user.
const purify = createDOMPurify(window);
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName !== "A") return;
  const href = node.getAttribute("href");
  if (href === null || !LINK_PROTOCOLS.test(href.trim())) {
    node.removeAttribute("href");
    return;
  }
  node.setAttribute("rel", "noopener noreferrer");
  node.setAttribute("target", "_blank");
});

const PURIFY_CONFIG = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP: LINK_PROTOCOLS,
  // Why: with that strict regexp, DOMPurify checks every attribute not named URI-safe against it.
  ADD_URI_SAFE_ATTR: ["start"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** The Markdown `text` as a sanitized DocumentFragment of this document. Cheap enough to call with
 * the whole text so far on each streamed delta: 20 KB of prose takes about a millisecond, 20 KB
 * dense with tables and lists some tens (tests/server/test_page_markdown.py times it). */
export function renderMarkdown(text) {
  return purify.sanitize(md.render(String(text ?? "")), PURIFY_CONFIG);
}

// Elements waiting for renderMarkdownSoon's next frame, with the latest text of each.
const pending = new Map();

/** Replace `el`'s children with the rendered `text`; `el` gets the `md` class markdown.css styles. */
export function renderMarkdownInto(el, text) {
  pending.delete(el); // a later, direct render wins over an older one still waiting for its frame
  el.classList.add("md");
  el.replaceChildren(renderMarkdown(text));
  return el;
}

/** Like renderMarkdownInto, at the next animation frame: of many calls for `el` within one frame
 * (a burst of streamed deltas) only the last text is rendered, once. */
export function renderMarkdownSoon(el, text) {
  if (!pending.size) {
    requestAnimationFrame(() => {
      const due = [...pending];
      pending.clear();
      for (const [target, latest] of due) renderMarkdownInto(target, latest);
    });
  }
  pending.set(el, text);
}
