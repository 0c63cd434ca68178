// Helpers shared by the pages: escaping, number and time formats, the API client, tables, paging.
export const $ = (s, root = document) => root.querySelector(s);
export const $$ = (s, root = document) => [...root.querySelectorAll(s)];
export const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));

export const CAUSE_COLOURS = {
  permission_violation: "#a40e26", no_retrieval: "#6e7781", evidence_not_in_kb: "#8250df",
  stale_context: "#bf8700", candidate_miss: "#d1242f", not_opened: "#fb8f44", dropped_before_context: "#e16f24",
  answered_unanswerable: "#9a6700", over_refusal: "#0969da", unsupported_claims: "#bf3989",
  incomplete_answer: "#1b7c83", invalid_citation: "#633c01", insufficient_trace: "#8c959f", ok: "#2da44e",
};
export const colour = (cause) => CAUSE_COLOURS[cause] || "#57606a";

/** A number rounded for reading: integers as they are, others to 3 significant decimals. */
export function num(v, digits = 3) {
  if (v === null || v === undefined) return "—";
  if (typeof v !== "number") return esc(v);
  if (Number.isInteger(v)) return v.toLocaleString();
  return Number(v.toFixed(digits)).toString();
}
export const pct = (v) => (v === null || v === undefined ? "—" : (100 * v).toFixed(1) + " %");
/** A fraction with both sides rounded: 0.43067/1 -> 0.43/1. */
export function frac(n, d) {
  if (d === null || d === undefined) return "";
  return `${num(n, 2)}/${num(d, 2)}`;
}
/** A stored timestamp (UTC, no zone) shown in the reader's zone. */
export function time(iso) {
  if (!iso) return "—";
  const s = /[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso.replace(" ", "T") + "Z";
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return esc(iso);
  return esc(d.toLocaleString(undefined, {year: "numeric", month: "short", day: "2-digit", hour: "2-digit",
    minute: "2-digit", second: "2-digit", timeZoneName: "short"}));
}
export const causeBadge = (c) => c ? `<span class="badge ${c === "ok" ? "ok" : "bad"}"><span class="swatch" data-colour="${esc(colour(c))}"></span>${esc(c)}</span>` : '<span class="muted">—</span>';

/* The API token lives in sessionStorage, not localStorage: it is gone when the tab closes, and is
 * not kept on disk in the browser's profile for every later page of this origin to read (with
 * localStorage a token typed once stayed for good, readable by any script that ever ran here). */
export const TOKEN_KEY = "ragfault-token";
export function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
}
/** A token an earlier version kept in localStorage is moved to this tab's session and removed. */
export function forgetStoredToken() {
  const old = localStorage.getItem(TOKEN_KEY);
  if (old !== null) {
    if (!token()) setToken(old);
    localStorage.removeItem(TOKEN_KEY);
  }
}
/** A call of the API; ``onWait(building)`` is told each time the server answers 202 (the dashboard's
 * facts are being computed), and the call is made again after the time it names. */
export async function api(path, body, method, onWait) {
  const headers = {"Content-Type": "application/json"};
  if (token()) headers.Authorization = "Bearer " + token();
  const init = body === undefined ? {headers, method: method || "GET"} : {method: method || "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body)};
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (r.status === 202 && data.building) {
    if (onWait) onWait(data.building);
    await new Promise((done) => setTimeout(done, 1000 * (data.building.retry_after || 1)));
    return api(path, body, method, onWait);
  }
  if (!r.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail || data);
    throw new Error(detail || r.statusText);
  }
  return data;
}
export const qs = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== "")).toString();
export function hashParams() { return Object.fromEntries(new URLSearchParams(location.hash.split("?")[1] || "")); }
export function go(page, params) { const q = qs(params || {}); location.hash = `#/${page}${q ? "?" + q : ""}`; }

/** Apply widths, offsets and colours kept in data attributes (no inline style attributes in the markup). */
export function paint(root) {
  $$("[data-w]", root).forEach((e) => { e.style.width = e.dataset.w + "%"; });
  $$("[data-l]", root).forEach((e) => { e.style.left = e.dataset.l + "%"; });
  $$("[data-colour]", root).forEach((e) => { e.style.background = e.dataset.colour; });
}

export function pager(total, offset, limit, onPage) {
  const el = document.createElement("div");
  el.className = "pager";
  const last = Math.max(0, Math.floor((total - 1) / limit) * limit);
  const from = total ? offset + 1 : 0, to = Math.min(total, offset + limit);
  el.innerHTML = `<button data-p="first" ${offset <= 0 ? "disabled" : ""}>« First</button>
    <button data-p="prev" ${offset <= 0 ? "disabled" : ""}>‹ Previous</button>
    <span class="muted" data-role="range">${from.toLocaleString()}–${to.toLocaleString()} of ${total.toLocaleString()}</span>
    <button data-p="next" ${to >= total ? "disabled" : ""}>Next ›</button>
    <button data-p="last" ${to >= total ? "disabled" : ""}>Last »</button>`;
  const target = {first: 0, prev: Math.max(0, offset - limit), next: offset + limit, last};
  $$("button", el).forEach((b) => b.addEventListener("click", () => onPage(target[b.dataset.p])));
  return el;
}

/** A sortable header cell: a button that names the key. */
export const sortTh = (key, label, cur, desc, cls = "") =>
  `<th class="${cls}" aria-sort="${cur === key ? (desc ? "descending" : "ascending") : "none"}"><button class="sort" data-sort="${key}">${esc(label)}${cur === key ? (desc ? " ▾" : " ▴") : ""}</button></th>`;

export function resultTable(res) {
  if (!res.rows.length) return '<p class="muted">(no rows)</p>';
  const cell = (v) => v === null || v === undefined ? '<td class="muted">NULL</td>'
    : typeof v === "number" ? `<td class="num">${num(v, 6)}</td>`
    : typeof v === "object" ? `<td class="mono">${esc(JSON.stringify(v))}</td>` : `<td>${esc(v)}</td>`;
  return `<div class="scroll"><table><thead><tr>${res.columns.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead>
    <tbody>${res.rows.map((r) => `<tr>${r.map(cell).join("")}</tr>`).join("")}</tbody></table></div>`;
}
