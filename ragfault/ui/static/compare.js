// Two runs side by side: metric deltas per slice, and the cases that regressed and improved, each
// linking to the trace of both runs.
import {$, api, esc, num, go, hashParams, paint, causeBadge} from "./util.js";

const METRIC_NAMES = {ok_share: "share of traces ok", candidate_recall: "candidate recall", context_recall: "context recall",
  context_retention: "context retention", answer_support: "answer support", fact_coverage: "fact coverage"};

export async function comparePage(main, _arg, current) {
  const p = hashParams();
  const overview = await api("/api/v1/ui/overview");
  const runs = overview.runs.map((r) => r.run_id);
  const base = p.base || runs[1] || runs[0] || "", nw = p.new || runs[0] || "";
  const opt = (sel) => runs.map((r) => `<option ${r === sel ? "selected" : ""} value="${esc(r)}">${esc(r)}</option>`).join("");
  main.innerHTML = `<h2>Compare runs</h2>
    <form class="row card" id="pick"><label>Base run <select name="base">${opt(base)}</select></label>
      <label>New run <select name="new">${opt(nw)}</select></label><button type="submit">Compare</button>
      <span class="muted small">Paired by case (the latest trace of each case in each run). Deltas are new − base, without a confidence interval.</span></form>
    <div id="cmp"></div>`;
  $("#pick").addEventListener("submit", (e) => { e.preventDefault(); go("compare", Object.fromEntries(new FormData(e.target))); });
  if (!base || !nw) { $("#cmp").innerHTML = '<p class="muted">No run to compare yet: traces carry a run id (ragfault.run_id) when they come from an experiment.</p>'; return; }
  const c = await api("/api/v1/ui/compare?" + new URLSearchParams({base, new: nw}));
  if (!current()) return;
  const cats = [...new Set(c.slices.map((s) => s.category))];
  const metrics = Object.keys(METRIC_NAMES).filter((m) => c.slices.some((s) => s.metric === m));
  const cell = (cat, m) => {
    const s = c.slices.find((x) => x.category === cat && x.metric === m);
    if (!s) return '<td class="num muted">—</td>';
    const cls = s.delta === null ? "" : s.delta > 0 ? "up" : s.delta < 0 ? "down" : "";
    const delta = s.delta === null ? "n/a" : `${s.delta > 0 ? "+" : ""}${num(s.delta)}`;
    return `<td class="num" data-metric="${esc(m)}"><span class="${cls}" data-role="delta">${delta}</span><br><span class="muted small">${num(s.base)} → ${num(s.new)} · n ${s.base_n} / ${s.new_n}</span></td>`;
  };
  const slices = `<table id="slices"><thead><tr><th>slice</th>${metrics.map((m) => `<th class="num">${esc(METRIC_NAMES[m])}</th>`).join("")}</tr></thead><tbody>
    ${cats.map((cat) => `<tr data-slice="${esc(cat)}"><td>${esc(cat)}</td>${metrics.map((m) => cell(cat, m)).join("")}</tr>`).join("")}</tbody></table>
    <p class="small muted">Each cell: Δ = new − base, then base → new and the traces each mean is over (n). Metric means are macro over traces where the metric applies.</p>`;
  const link = (id, label) => id ? `<a href="#/trace/${esc(id)}">${esc(label)}</a>` : '<span class="muted">—</span>';
  const caseRows = (change) => c.cases.filter((r) => r.change === change).map((r) => `<tr><td>${esc(r.case_id)}</td><td>${esc(r.category)}</td>
    <td>${causeBadge(r.base_root_cause)} ${link(r.base_trace_id, "base trace")}</td><td>${causeBadge(r.new_root_cause)} ${link(r.new_trace_id, "new trace")}</td></tr>`).join("");
  const section = (change, title) => { const rows = caseRows(change); const n = c.cases.filter((r) => r.change === change).length;
    return `<div class="card" id="cases-${change}"><h3>${title} <span class="muted small">${n} of ${c.cases.length} cases</span></h3>${rows ? `<table><thead><tr><th>case</th><th>category</th><th>${esc(base)}</th><th>${esc(nw)}</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">None.</p>'}</div>`; };
  $("#cmp").innerHTML = `<div class="card"><h3>Metrics per slice</h3>${slices}</div>
    ${section("regressed", "Regressed (ok → failing)")}${section("fixed", "Improved (failing → ok)")}${section("changed", "Root cause changed")}`;
  paint($("#cmp"));
}
