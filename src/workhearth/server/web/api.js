// Same-origin JSON calls. The HttpOnly session cookie authorizes them; the page never holds a token.

/** An error answer: ``detail`` (English), ``code`` and ``params`` (worded by errors.js). */
export class ApiError extends Error {
  constructor(status, detail, code = "", params = {}) {
    super(detail);
    this.status = status;
    this.code = code;
    this.params = params && typeof params === "object" ? params : {};
  }
}

function detailOf(body, fallback) {
  if (!body || body.detail === undefined) return fallback;
  if (typeof body.detail === "string") return body.detail;
  // Why: FastAPI's validation errors are a list of {loc, msg}; show the messages.
  if (Array.isArray(body.detail)) return body.detail.map((d) => d.msg || String(d)).join("; ");
  return JSON.stringify(body.detail);
}

export async function api(path, { method = "GET", body, keepalive = false, onStatus } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" }, keepalive };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, String(err.message || err), "network");
  }
  onStatus?.(res.status); // e.g. POST /v1/memory: 201 saved, 200 already saved
  if (res.status === 401) document.dispatchEvent(new CustomEvent("hearth:unauthorized"));
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const code = data && typeof data.code === "string" ? data.code : "";
    throw new ApiError(res.status, detailOf(data, `${res.status} ${res.statusText}`), code, data?.params);
  }
  return data;
}

export const q = encodeURIComponent;

/** The first array found in a response: the routes wrap lists in a named key. */
export function listOf(data, ...keys) {
  if (Array.isArray(data)) return data;
  for (const key of keys) if (data && Array.isArray(data[key])) return data[key];
  return [];
}
