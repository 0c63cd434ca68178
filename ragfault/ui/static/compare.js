// Two runs side by side, as `ragfault compare` computes them (GET /api/v1/compare): each metric of
// the report per slice with both runs' values and denominators, the paired difference over the cases
// both runs answered and its 95 % bootstrap interval; the cases that regressed and improved (McNemar's
// exact p), each linking to the trace of both runs.
import {$, api, esc, num, frac, go, hashParams, paint, causeBadge} from "./util.js";

const ALL = "(all)";

function signed(v) {
  if (v === null || v === undefined) return "n/a";
  return `${v > 0 ? "+" : ""}${num(v)}`;
}

function metricRows(metrics, slice, resamples) {
  const rows = metrics.filter((m) => (m.category ?? ALL) === slice);
  if (!rows.length) return '<p class="muted">No metric applies to this slice.</p>';
  return `<table id="metrics"><thead><tr><th>metric</th><th class="num">base</th><th class="num">new</th>
      <th class="num">Δ new − base</th><th class="num">95 % interval</th><th class="num">paired cases</th></tr></thead><tbody>
    ${rows.map((m) => {
      const cls = !m.significant || m.delta === null ? "" : m.delta > 0 ? "up" : "down";
      const ci = m.ci_low === null ? "n/a" : `[${signed(m.ci_low)}, ${signed(m.ci_high)}]`;
      return `<tr data-metric="${esc(m.metric)}" data-slice="${esc(m.category ?? ALL)}"${m.significant ? ' data-significant="1"' : ""}>
        <td>${esc(m.metric)}</td>
        <td class="num">${m.baseline === null ? "n/a" : num(m.baseline)}<br><span class="muted small">${frac(m.baseline_numerator, m.baseline_denominator)} · ${m.baseline_cases} cases</span></td>
        <td class="num">${m.run === null ? "n/a" : num(m.run)}<br><span class="muted small">${frac(m.run_numerator, m.run_denominator)} · ${m.run_cases} cases</span></td>
        <td class="num"><span class="${cls}" data-role="delta">${signed(m.delta)}</span></td>
        <td class="num" data-role="ci">${ci}</td><td class="num" data-role="n">${m.n}</td></tr>`;
    }).join("")}</tbody></table>
    <p class="small muted">Δ is the paired difference over the cases both runs answered (the latest trace of each case in each run);
      the interval is a percentile bootstrap over those cases (${num(resamples)} resamples). A coloured Δ is one whose interval excludes 0.
      A value with an empty denominator is n/a, never 0 or 1.</p>`;
}

export async function comparePage(main, _arg, current) {
  const p = hashParams();
  const overview = await api("/api/v1/ui/overview");
  const runs = overview.runs.map((r) => r.run_id);
  const base = p.base || runs[1] || runs[0] || "", nw = p.new || runs[0] || "";
  const opt = (sel) => runs.map((r) => `<option ${r === sel ? "selected" : ""} value="${esc(r)}">${esc(r)}</option>`).join("");
  main.innerHTML = `<h2>Compare runs</h2>
    <form class="row card" id="pick"><label>Base run <select name="base">${opt(base)}</select></label>
      <label>New run <select name="new">${opt(nw)}</select></label><button type="submit">Compare</button>
      <span class="muted small">Paired by case: the same numbers as <code>ragfault compare --baseline BASE NEW</code>.</span></form>
    <div id="cmp"></div>`;
  $("#pick").addEventListener("submit", (e) => { e.preventDefault(); go("compare", Object.fromEntries(new FormData(e.target))); });
  if (!base || !nw) { $("#cmp").innerHTML = '<p class="muted">No run to compare yet: traces carry a run id (ragfault.run_id) when they come from an experiment.</p>'; return; }
  const [stats, c] = await Promise.all([
    api("/api/v1/compare?" + new URLSearchParams({run: nw, baseline: base})),
    api("/api/v1/ui/compare?" + new URLSearchParams({base, new: nw})),
  ]);
  if (!current()) return;
  const slices = [ALL, ...new Set(stats.metrics.map((m) => m.category).filter((x) => x !== null))];
  const slice = slices.includes(p.slice) ? p.slice : ALL;
  const link = (id, label) => id ? `<a href="#/trace/${esc(id)}">${esc(label)}</a>` : '<span class="muted">—</span>';
  const caseRows = (change) => c.cases.filter((r) => r.change === change).map((r) => `<tr><td>${esc(r.case_id)}</td><td>${esc(r.category)}</td>
    <td>${causeBadge(r.base_root_cause)} ${link(r.base_trace_id, "base trace")}</td><td>${causeBadge(r.new_root_cause)} ${link(r.new_trace_id, "new trace")}</td></tr>`).join("");
  const section = (change, title, extra = "") => { const rows = caseRows(change); const n = c.cases.filter((r) => r.change === change).length;
    return `<div class="card" id="cases-${change}"><h3>${title} <span class="muted small">${n} of ${c.cases.length} cases${extra}</span></h3>${rows ? `<table><thead><tr><th>case</th><th>category</th><th>${esc(base)}</th><th>${esc(nw)}</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">None.</p>'}</div>`; };
  const mc = stats.cases.mcnemar_p;
  const mcnemar = mc === null ? "" : ` · McNemar's exact p = <span data-role="mcnemar">${num(mc)}</span> over ${stats.cases.paired} paired cases`;
  $("#cmp").innerHTML = `<div class="card"><h3>Metrics <label class="small">slice <select id="slice">${slices.map((s) => `<option ${s === slice ? "selected" : ""} value="${esc(s)}">${esc(s)}</option>`).join("")}</select></label></h3>
      ${metricRows(stats.metrics, slice, stats.resamples)}</div>
    ${section("regressed", "Regressed (ok → failing)", mcnemar)}${section("fixed", "Improved (failing → ok)")}${section("changed", "Root cause changed")}`;
  $("#slice").addEventListener("change", (e) => go("compare", {base, new: nw, slice: e.target.value}));
  paint($("#cmp"));
}
