// The attribution dashboard: root causes (click one to filter the cases), layered metrics with their
// denominators, the refusal cross-table, the retrieval x generation quadrant, root-cause share over
// time, and the case table paged, sorted and filtered on the server.
import {$, $$, api, esc, num, pct, frac, time, qs, go, hashParams, paint, pager, sortTh, colour, causeBadge} from "./util.js";

const FILTERS = ["run_id", "dataset", "since", "until"];
let cached = {key: null, data: null};

export async function dashboardPage(main, _arg, current) {
  const p = hashParams();
  const filters = Object.fromEntries(FILTERS.map((k) => [k, p[k] || ""]));
  const bucket = p.bucket || "day";
  const key = qs({...filters, bucket});
  const [overview, dash] = await Promise.all([
    api("/api/v1/ui/overview"),
    cached.key === key ? cached.data : api("/api/v1/ui/dashboard?" + key, undefined, undefined, (b) => {
      if (current()) main.innerHTML = `<div class="card" id="building"><h3>Computing the dashboard</h3>
        <p class="muted">Every evaluated trace's attribution is being computed (${esc(b.why)}) since ${time(b.since)}.
        This page draws itself when that is done; the other pages work meanwhile.</p></div>`;
    }),
  ]);
  cached = {key, data: dash};
  if (!current()) return;
  const opt = (vals, sel, all) => [`<option value="">${esc(all)}</option>`, ...vals.map((v) => `<option ${v === sel ? "selected" : ""} value="${esc(v)}">${esc(v)}</option>`)].join("");
  main.innerHTML = `<h2>Attribution</h2>
    <form class="row" id="filters" aria-label="Filters">
      <label>Run <select name="run_id">${opt(overview.runs.map((r) => r.run_id), filters.run_id, "all runs")}</select></label>
      <label>Dataset <select name="dataset">${opt(overview.datasets, filters.dataset, "all datasets")}</select></label>
      <label>From (UTC) <input type="datetime-local" name="since" value="${esc(filters.since)}"></label>
      <label>To (UTC) <input type="datetime-local" name="until" value="${esc(filters.until)}"></label>
      <label>Trend by <select name="bucket"><option ${bucket === "day" ? "selected" : ""}>day</option><option ${bucket === "hour" ? "selected" : ""}>hour</option></select></label>
      <button type="submit">Apply</button>
    </form>
    <div class="card" id="causes-card"></div>
    <div class="grid2"><div class="card" id="metrics-card"></div><div class="card" id="refusal-card"></div></div>
    <div class="grid2"><div class="card" id="quadrant-card"></div><div class="card" id="trend-card"></div></div>
    <div class="card" id="cases-card"><h3>Cases</h3><div id="cases"></div></div>`;
  $("#filters").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(e.target));
    go("dashboard", f);
  });
  renderCauses(dash, p);
  renderMetrics(dash, p.slice || "(all)");
  renderRefusals(dash);
  renderQuadrant(dash);
  renderTrend(dash, bucket);
  await renderCases(p, filters, current);
}

function renderCauses(dash, p) {
  const counts = {};
  for (const r of dash.root_causes) counts[r.root_cause] = (counts[r.root_cause] || 0) + r.traces;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const order = Object.keys(counts).sort((a, b) => (a === "ok") - (b === "ok") || counts[b] - counts[a]);
  const el = $("#causes-card");
  if (!total) {
    el.innerHTML = '<h3>Root causes</h3><p class="muted">No evaluated trace with a gold case matches these filters. Load gold cases (see <a href="#/start">Getting started</a>) or widen the filters.</p>';
    return;
  }
  el.innerHTML = `<h3>Root causes <span class="muted small">of ${total.toLocaleString()} evaluated traces with a gold case · click one to filter the cases</span></h3>
    <div class="causes">${order.map((c) => `<button class="cause ${p.cause === c ? "on" : ""}" data-cause="${esc(c)}" aria-pressed="${p.cause === c}"><span class="swatch" data-colour="${colour(c)}"></span>${esc(c)}</button>
      <div class="track"><div class="fill" data-w="${(100 * counts[c] / total).toFixed(2)}" data-colour="${colour(c)}"></div></div>
      <span class="num small">${counts[c].toLocaleString()} of ${total.toLocaleString()} (${pct(counts[c] / total)})</span>`).join("")}</div>
    ${p.cause ? '<p class="small"><button id="clear-cause">Show every root cause</button></p>' : ""}`;
  paint(el);
  $$("button.cause", el).forEach((b) => b.addEventListener("click", () => {
    const q = hashParams();
    go("dashboard", {...q, cause: q.cause === b.dataset.cause ? "" : b.dataset.cause, offset: ""});
  }));
  $("#clear-cause", el)?.addEventListener("click", () => go("dashboard", {...hashParams(), cause: "", offset: ""}));
}

function renderMetrics(dash, slice) {
  const el = $("#metrics-card");
  const cats = [...new Set(dash.layer_metrics.map((r) => r.category))].sort((a, b) => (b === "(all)") - (a === "(all)") || a.localeCompare(b));
  const rows = dash.layer_metrics.filter((r) => r.category === slice);
  el.innerHTML = `<h3>Layered metrics</h3>
    <div class="row small"><label>Slice <select id="slice">${cats.map((c) => `<option ${c === slice ? "selected" : ""}>${esc(c)}</option>`).join("")}</select></label>
    <span class="muted">macro: mean over the traces where the metric applies (n); micro: sum of numerators / sum of denominators</span></div>
    ${rows.length ? `<table><thead><tr><th>stage</th><th>metric</th><th class="num">macro</th><th class="num">n</th><th class="num">micro</th><th class="num">num/den</th><th class="num">n/a</th></tr></thead><tbody>
    ${rows.map((r) => `<tr><td>${esc(r.stage)}</td><td>${esc(r.metric)}</td><td class="num">${num(r.macro)}</td><td class="num">${num(r.n_traces)}</td>
      <td class="num">${num(r.micro)}</td><td class="num">${frac(r.numerator, r.denominator)}</td><td class="num">${num(r.not_applicable)}</td></tr>`).join("")}</tbody></table>` : '<p class="muted">No metric applies here.</p>'}`;
  $("#slice", el).addEventListener("change", (e) => { history.replaceState(null, "", "#/dashboard?" + qs({...hashParams(), slice: e.target.value})); renderMetrics(dash, e.target.value); });
}

function renderRefusals(dash) {
  const el = $("#refusal-card");
  const all = dash.refusal_table.find((r) => r.category === "(all)");
  if (!all) { el.innerHTML = '<h3>Refusals</h3><p class="muted">No case with an answerability verdict.</p>'; return; }
  const rate = (v, n, d) => v === null ? `<span class="muted">n/a (0 ${d})</span>` : `${pct(v)} <span class="muted small">of ${n} ${d}</span>`;
  const cats = dash.refusal_table.filter((r) => r.category !== "(all)");
  el.innerHTML = `<h3>Refusals</h3>
    <table><thead><tr><th></th><th class="num">answered</th><th class="num">refused</th></tr></thead><tbody>
      <tr><th>answerable</th><td class="num">${num(all.answerable_answered)}</td><td class="num">${num(all.answerable_refused)}</td></tr>
      <tr><th>unanswerable</th><td class="num">${num(all.unanswerable_answered)}</td><td class="num">${num(all.unanswerable_refused)}</td></tr></tbody></table>
    <p class="small">Answer accuracy ${rate(all.answer_accuracy, all.answerable, "answerable")} · over-refusal ${rate(all.over_refusal_rate, all.answerable, "answerable")} · correct refusal ${rate(all.correct_refusal_rate, all.unanswerable, "unanswerable")}</p>
    ${cats.length ? `<table class="small"><thead><tr><th>category</th><th class="num">accuracy</th><th class="num">over-refusal</th><th class="num">correct refusal</th></tr></thead><tbody>
      ${cats.map((r) => `<tr><td>${esc(r.category)}</td><td class="num">${r.answer_accuracy === null ? "n/a" : pct(r.answer_accuracy)} <span class="muted">/${r.answerable}</span></td>
        <td class="num">${r.over_refusal_rate === null ? "n/a" : pct(r.over_refusal_rate)} <span class="muted">/${r.answerable}</span></td>
        <td class="num">${r.correct_refusal_rate === null ? "n/a" : pct(r.correct_refusal_rate)} <span class="muted">/${r.unanswerable}</span></td></tr>`).join("")}</tbody></table>` : ""}`;
}

function renderQuadrant(dash) {
  const el = $("#quadrant-card");
  const cell = {};
  let total = 0;
  for (const r of dash.quadrant) { const k = r.retrieval + "|" + r.generation; cell[k] = (cell[k] || 0) + r.traces; total += r.traces; }
  const c = (ret, gen) => { const n = cell[ret + "|" + gen] || 0; return `<div class="cell ${ret[0]}${gen[0]}">${n.toLocaleString()}<br><span class="muted small">${total ? pct(n / total) : "—"}</span></div>`; };
  el.innerHTML = `<h3>Retrieval × generation <span class="muted small">of ${total.toLocaleString()} traces</span></h3>
    <div class="quadrant"><div class="h"></div><div class="h">retrieval good</div><div class="h">retrieval bad</div><div class="h">no evidence (n/a)</div>
      <div class="h">generation good</div>${c("good", "good")}${c("bad", "good")}${c("n/a", "good")}
      <div class="h">generation bad</div>${c("good", "bad")}${c("bad", "bad")}${c("n/a", "bad")}</div>
    <p class="small muted">Retrieval good: every evidence unit reached the final context. Generation good: supported, complete, or a correct refusal.</p>`;
}

function renderTrend(dash, bucket) {
  const el = $("#trend-card");
  const buckets = [...new Set(dash.trend.map((r) => r.bucket))].sort();
  if (!buckets.length) { el.innerHTML = '<h3>Root causes over time</h3><p class="muted">No data.</p>'; return; }
  const causes = [...new Set(dash.trend.map((r) => r.root_cause))].sort((a, b) => (a === "ok") - (b === "ok") || a.localeCompare(b));
  const W = 560, H = 180, pad = 28, bw = Math.max(2, Math.min(40, (W - pad) / buckets.length - 2));
  const x = (i) => pad + i * ((W - pad) / buckets.length);
  let bars = "";
  buckets.forEach((b, i) => {
    const rows = dash.trend.filter((r) => r.bucket === b);
    const tot = rows[0].bucket_traces;
    let y = H - 18;
    for (const c of causes) {
      const r = rows.find((r) => r.root_cause === c);
      if (!r) continue;
      const h = (H - 26) * r.traces / tot;
      y -= h;
      bars += `<rect x="${x(i).toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${colour(c)}"><title>${esc(b)} · ${esc(c)}: ${r.traces} of ${tot}</title></rect>`;
    }
  });
  const label = (b) => bucket === "hour" ? b.slice(5, 13).replace("T", " ") + "h" : b.slice(0, 10);
  const step = Math.max(1, Math.ceil(buckets.length / 6));
  const ticks = buckets.map((b, i) => i % step ? "" : `<text x="${x(i).toFixed(1)}" y="${H - 4}">${esc(label(b))}</text>`).join("");
  el.innerHTML = `<h3>Root-cause share by ${esc(bucket)} <span class="muted small">(UTC buckets; each bar is 100 % of its traces)</span></h3>
    <svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="Root-cause share per ${esc(bucket)}">
      <text x="0" y="12">100%</text><text x="0" y="${H - 18}">0%</text>${bars}${ticks}</svg>
    <div class="legend">${causes.map((c) => `<span><span class="swatch" data-colour="${colour(c)}"></span>${esc(c)}</span>`).join("")}</div>`;
  paint(el);
}

async function renderCases(p, filters, current) {
  const limit = 25, offset = +p.offset || 0, sort = p.sort || "root_cause", desc = p.desc === "1";
  const params = {...filters, root_cause: p.cause, category: p.category, q: p.q, sort, desc: desc ? "true" : "", limit, offset};
  const res = await api("/api/v1/ui/cases?" + qs(params));
  if (!current()) return;
  const el = $("#cases");
  el.innerHTML = `<form class="row" id="case-filter">
      ${p.cause ? `<span>Root cause ${causeBadge(p.cause)}</span>` : ""}
      <label>Category <input name="category" size="12" value="${esc(p.category || "")}"></label>
      <label>Search <input name="q" type="search" size="24" placeholder="question text or case id" value="${esc(p.q || "")}"></label>
      <button type="submit">Filter</button> <span class="muted" data-role="case-total">${res.total.toLocaleString()} cases</span></form>
    <table><thead><tr>${sortTh("root_cause", "root cause", sort, desc)}${sortTh("case_id", "case", sort, desc)}${sortTh("category", "category", sort, desc)}
      <th>failing layers</th><th>question</th>${sortTh("context_recall", "ctx recall", sort, desc, "num")}${sortTh("answer_support", "support", sort, desc, "num")}
      ${sortTh("run_id", "run", sort, desc)}${sortTh("start_time", "time", sort, desc)}</tr></thead>
    <tbody>${res.rows.map((r) => `<tr data-trace="${esc(r.trace_id)}"><td>${causeBadge(r.root_cause)}</td>
      <td><a href="#/trace/${esc(r.trace_id)}">${esc(r.case_id)}</a></td><td class="nw">${esc(r.category)}</td>
      <td>${(r.failing_layers || []).map((l) => `<span class="badge">${esc(l)}</span>`).join(" ") || '<span class="muted">none</span>'}</td>
      <td class="clip"><span class="clip-text">${esc(r.query_text)}</span></td><td class="num">${num(r.context_recall, 2)}</td><td class="num">${num(r.answer_support, 2)}</td>
      <td class="nw">${esc(r.run_id)}</td><td class="small">${time(r.start_time)}</td></tr>`).join("") || '<tr><td colspan="9" class="muted">No case matches.</td></tr>'}</tbody></table>`;
  paint(el);
  el.appendChild(pager(res.total, offset, limit, (o) => go("dashboard", {...hashParams(), offset: o || ""})));
  $("#case-filter", el).addEventListener("submit", (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(e.target));
    go("dashboard", {...hashParams(), ...f, offset: ""});
  });
  $$("button.sort", el).forEach((b) => b.addEventListener("click", () => {
    const k = b.dataset.sort;
    go("dashboard", {...hashParams(), sort: k, desc: sort === k && !desc ? "1" : "", offset: ""});
  }));
}
