// The SQL console: one read-only SELECT, its row count and timing, errors as DuckDB wrote them
// (monospace, so the caret lines up), saved and bundled queries one click away, CSV download.
import {$, $$, api, esc, resultTable} from "./util.js";

const SAVED = "ragfault-saved-sql";
const saved = () => JSON.parse(localStorage.getItem(SAVED) || "[]");
let last = null;

function csv(res) {
  const cell = (v) => { if (v === null || v === undefined) return ""; const s = typeof v === "object" ? JSON.stringify(v) : String(v); return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };
  return [res.columns.map(cell).join(","), ...res.rows.map((r) => r.map(cell).join(","))].join("\r\n") + "\r\n";
}
const usedParams = (q) => [...new Set([...q.replace(/--[^\n]*/g, "").replace(/'(?:[^']|'')*'/g, "''").matchAll(/(?<![\w$])\$([A-Za-z_]\w*)/g)].map((m) => m[1]))];

export async function sqlPage(main, _arg, current = () => true) {
  const bundled = await api("/api/v1/ui/queries");
  const text = localStorage.getItem("ragfault-sql") || "SELECT root_cause, count(*) AS traces FROM attribution GROUP BY 1 ORDER BY 2 DESC";
  main.innerHTML = `<h2>SQL</h2><div class="grid-sql">
    <div><div class="card"><label for="sql" class="small muted">One read-only SELECT; $name parameters. Tables: spans, steps, step_documents, traces, evaluations, gold_cases, kb_documents, feedback, human_labels, judge_verdicts; views: attribution</label>
      <textarea id="sql" spellcheck="false">${esc(text)}</textarea>
      <div id="params" class="row"></div>
      <div class="row"><button class="primary" id="run">Run (Ctrl+Enter)</button><input id="save-name" size="14" placeholder="name" aria-label="Name to save the query as"><button id="save">Save</button><button id="csv" disabled>Download CSV</button>
        <span id="status" class="muted small" role="status"></span></div></div>
      <div class="card" id="out"></div></div>
    <div><div class="card"><h3>Saved queries</h3><ul id="saved" class="plain"></ul></div>
      <div class="card"><h3>Bundled queries</h3><ul class="plain">${bundled.map((q, i) => `<li><button class="link" data-b="${i}" title="${esc(q.description)}">${esc(q.name)}</button></li>`).join("")}</ul></div></div></div>`;
  const ta = $("#sql");
  const paramValues = {};
  const renderParams = () => {
    const names = usedParams(ta.value);
    $("#params").innerHTML = names.map((n) => `<label class="small">$${esc(n)} <input data-param="${esc(n)}" size="14" value="${esc(paramValues[n] ?? "")}" placeholder="NULL"></label>`).join("");
    $$("[data-param]").forEach((i) => i.addEventListener("input", () => { paramValues[i.dataset.param] = i.value; }));
  };
  const renderSaved = () => {
    $("#saved").innerHTML = saved().map((s, i) => `<li><button class="link" data-s="${i}">${esc(s.name)}</button> <button class="small" data-del="${i}" aria-label="Delete ${esc(s.name)}">×</button></li>`).join("") || '<li class="muted small">None yet: write a query, name it and press Save.</li>';
    $$("[data-s]").forEach((b) => b.addEventListener("click", () => { ta.value = saved()[+b.dataset.s].sql; renderParams(); run(); }));
    $$("[data-del]").forEach((b) => b.addEventListener("click", () => { const l = saved(); l.splice(+b.dataset.del, 1); localStorage.setItem(SAVED, JSON.stringify(l)); renderSaved(); }));
  };
  const run = async () => {
    const q = ta.value;
    localStorage.setItem("ragfault-sql", q);
    const params = Object.fromEntries(usedParams(q).map((n) => [n, paramValues[n] === undefined || paramValues[n] === "" ? null : paramValues[n]]));
    $("#status").textContent = "running…";
    const t0 = performance.now();
    try {
      const res = await api("/api/v1/sql", {sql: q, params});
      if (!current()) return;  // the reader has moved to another page meanwhile
      const ms = performance.now() - t0;
      last = res;
      $("#out").innerHTML = resultTable(res);
      $("#status").textContent = `${res.rows.length.toLocaleString()} row${res.rows.length === 1 ? "" : "s"}${res.truncated ? " (cut at the server's row cap)" : ""} in ${ms.toFixed(0)} ms`;
      $("#csv").disabled = false;
    } catch (e) {
      if (!current()) return;
      last = null;
      $("#csv").disabled = true;
      $("#status").textContent = `error after ${(performance.now() - t0).toFixed(0)} ms`;
      $("#out").innerHTML = `<pre class="err" id="sql-error">${esc(e.message)}</pre>`;
    }
  };
  ta.addEventListener("input", renderParams);
  ta.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } });
  $("#run").addEventListener("click", run);
  $("#save").addEventListener("click", () => {
    const name = $("#save-name").value.trim();
    if (!name) { $("#save-name").focus(); $("#status").textContent = "Name the query first."; return; }
    const l = saved().filter((s) => s.name !== name);
    l.push({name, sql: ta.value});
    localStorage.setItem(SAVED, JSON.stringify(l));
    renderSaved();
  });
  $("#csv").addEventListener("click", () => {
    if (!last) return;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([csv(last)], {type: "text/csv;charset=utf-8"}));
    a.download = "ragfault-query.csv";
    document.body.appendChild(a); a.click(); a.remove();
  });
  $$("[data-b]").forEach((b) => b.addEventListener("click", () => {
    const q = bundled[+b.dataset.b];
    ta.value = q.sql;
    for (const [n, d] of Object.entries(q.defaults || {})) if (d && d.toUpperCase() !== "NULL") paramValues[n] = d.replace(/^['"]|['"]$/g, "");
    renderParams();
    run();
  }));
  renderParams();
  renderSaved();
  run();
}
