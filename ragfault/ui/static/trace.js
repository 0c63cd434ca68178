// One trace: the why (root cause, claims, missing facts, dropped units), the steps as a waterfall,
// candidates against the final context, and the verdicts, failing first, trace level and step level apart.
import {$, api, esc, num, frac, time, paint, causeBadge} from "./util.js";

const parse = (d) => { if (typeof d !== "string") return d || null; try { return JSON.parse(d); } catch { return null; } };
const verdictRank = (v) => v.passed === false ? 0 : v.status === "error" ? 1 : v.passed === true ? 2 : v.status === "ok" ? 3 : 4;
const outcome = (v) => v.passed === false ? '<span class="badge bad">failed</span>' : v.passed === true ? '<span class="badge ok">passed</span>'
  : v.status === "ok" ? '<span class="badge">scored</span>' : `<span class="badge ${v.status === "error" ? "bad" : ""}">${esc(v.status.replace("_", " "))}</span>`;

function docCard(d, contextKeys) {
  const key = d.kb_doc_id || d.doc_id || d.chunk_id || d.content;
  const dropped = d.evidence.length && d.stage !== "context" && !contextKeys.has(key);
  const cls = ["doc", d.evidence.length ? "evidence" : "", dropped ? "dropped" : "", d.forbidden ? "forbidden" : ""].join(" ");
  const flags = [
    ...d.evidence.map((e) => `<span class="badge ok">evidence ${esc(e)}</span>`),
    dropped ? '<span class="badge warn">dropped before context</span>' : "",
    d.stale ? `<span class="badge warn">stale: ${esc(d.stale.why || d.stale.reason || "superseded")}</span>` : "",
    d.forbidden ? '<span class="badge bad">outside user scope</span>' : "",
    d.source === "derived" ? '<span class="badge">found in prompt</span>' : "",
  ].join("");
  return `<div class="${cls}"><div><b>#${d.position + 1}</b> <span class="mono">${esc(d.doc_id || d.kb_doc_id || "(no id)")}</span>
    ${d.score !== null ? `<span class="muted">score ${num(d.score)}</span>` : ""} ${flags}</div><div class="text">${esc(d.content || "")}</div></div>`;
}

function why(v, stepName) {
  const by = (m) => v.verdicts.filter((r) => r.metric === m);
  const parts = [];
  const claimRows = [];
  for (const m of ["judge_answer_support", "answer_support"]) {
    for (const r of by(m)) {
      const d = parse(r.details) || {};
      for (const c of d.claims || d.items || []) claimRows.push({source: m, claim: c.claim, verdict: c.verdict || c.label, sentence: c.sentence || c.evidence, doc: c.doc_id || c.evidence_doc,
        notes: [...(c.conflicts || []).map((x) => "conflicts: " + (typeof x === "string" ? x : JSON.stringify(x))), ...(c.missing || []).map((x) => "not in the sentence: " + (typeof x === "string" ? x : JSON.stringify(x)))]});
    }
  }
  if (claimRows.length) {
    claimRows.sort((a, b) => (a.verdict === "supported") - (b.verdict === "supported"));
    parts.push(`<h3>Claims of the answer</h3><table><thead><tr><th>claim</th><th>verdict</th><th>context sentence that supports or fails it</th><th>by</th></tr></thead><tbody>
      ${claimRows.map((c) => `<tr class="${c.verdict === "supported" ? "" : "fail"}"><td>${esc(c.claim)}</td><td><span class="badge ${c.verdict === "supported" ? "ok" : "bad"}">${esc(c.verdict)}</span></td>
        <td>${c.sentence ? esc(c.sentence) + (c.doc ? ` <span class="muted small">(${esc(c.doc)})</span>` : "") : '<span class="muted">no sentence of the context</span>'}${(c.notes || []).map((n) => ` <span class="badge warn">${esc(n)}</span>`).join("")}</td><td class="small muted">${esc(c.source)}</td></tr>`).join("")}</tbody></table>`);
  }
  const fc = by("fact_coverage")[0];
  const facts = (parse(fc?.details) || {}).facts || [];
  if (facts.length) {
    parts.push(`<h3>Required facts</h3><table><tbody>${facts.map((f) => `<tr class="${f.expressed ? "" : "fail"}"><td class="mono">${esc(f.id)}</td><td>${esc(f.text)}</td>
      <td>${f.expressed ? '<span class="badge ok">in the answer</span>' : '<span class="badge bad">missing from the answer</span>'}${f.expressed ? "" : f.in_context ? ' <span class="badge warn">was in the context</span>' : ' <span class="badge">not in the context either</span>'}</td></tr>`).join("")}</tbody></table>`);
  }
  const ret = by("context_retention")[0];
  const dropped = (parse(ret?.details) || {}).dropped || [];
  if (dropped.length) {
    parts.push(`<h3>Evidence dropped before the context</h3><table><tbody>${dropped.map((d) => `<tr class="fail"><td>${esc(d.label || d.doc_id)}</td>
      <td>dropped by <b>${esc(d.step)}</b>${d.span_id ? ` at step <span class="mono">${esc(stepName[d.span_id] || d.span_id)}</span>` : ""}</td>
      <td class="muted">${d.candidate_rank ? `was candidate #${d.candidate_rank}` : ""}</td></tr>`).join("")}</tbody></table>`);
  }
  const missing = [...((parse(by("context_recall")[0]?.details) || {}).missing || [])];
  if (missing.length) parts.push(`<h3>Evidence not in the final context</h3><ul>${missing.map((m) => `<li>${esc(m.label || m.doc_id || JSON.stringify(m))}</li>`).join("")}</ul>`);
  return parts.join("");
}

function verdictTable(rows, stepName, withStep) {
  if (!rows.length) return '<p class="muted">None.</p>';
  rows = [...rows].sort((a, b) => verdictRank(a) - verdictRank(b) || a.evaluator.localeCompare(b.evaluator) || a.metric.localeCompare(b.metric));
  return `<table><thead><tr><th>outcome</th><th>metric</th>${withStep ? "<th>step</th>" : ""}<th class="num">value</th><th class="num">fraction</th><th>label / reason</th><th>evaluator</th><th>details</th></tr></thead><tbody>
    ${rows.map((r) => `<tr class="${r.passed === false ? "fail" : ""}"><td>${outcome(r)}</td><td>${esc(r.metric)}</td>${withStep ? `<td>${esc(stepName[r.span_id] || r.span_id)}</td>` : ""}
      <td class="num">${num(r.value)}</td><td class="num">${frac(r.numerator, r.denominator)}</td><td>${esc([r.label, r.reason].filter(Boolean).join(" · "))}</td>
      <td class="small muted">${esc(r.evaluator)} (${esc(r.tier)})</td>
      <td>${r.details && r.details !== "{}" ? `<details><summary>show</summary><pre class="mono">${esc(JSON.stringify(parse(r.details), null, 1))}</pre></details>` : ""}</td></tr>`).join("")}</tbody></table>`;
}

export async function tracePage(main, id, current) {
  const v = await api(`/api/v1/traces/${encodeURIComponent(id)}/view`);
  if (!current()) return;
  const t = v.trace, a = v.attribution;
  const end = Math.max(1, ...v.steps.map((s) => (s.start_ms || 0) + (s.duration_ms || 0)));
  const stepName = Object.fromEntries(v.steps.map((s) => [s.span_id, `${s.step_type} ${s.name}`]));
  const waterfall = v.steps.map((s) => `<tr><td><span class="badge">${esc(s.step_type)}</span> ${esc(s.name)}${s.is_answer ? ' <span class="badge ok">answer</span>' : ""}${s.status_code === "ERROR" ? ' <span class="badge bad">error</span>' : ""}</td>
    <td class="wf"><div class="wf-track"><div class="wf-bar ${esc(s.step_type)}" data-l="${(100 * (s.start_ms || 0) / end).toFixed(2)}" data-w="${(100 * (s.duration_ms || 0) / end).toFixed(2)}"></div></div></td>
    <td class="num small">${s.duration_ms !== null ? num(s.duration_ms, 1) + " ms" : ""}${s.total_tokens ? " · " + s.total_tokens + " tok" : ""}</td></tr>`).join("");
  const ctxDocs = v.documents.filter((d) => d.stage === "context");
  const contextKeys = new Set(ctxDocs.map((d) => d.kb_doc_id || d.doc_id || d.chunk_id || d.content));
  const groups = {};
  v.documents.filter((d) => d.stage !== "context").forEach((d) => { (groups[d.span_id + " " + d.stage] ||= []).push(d); });
  const stepIndex = Object.fromEntries(v.steps.map((s, i) => [s.span_id, i]));
  const stageOrder = {candidate: 0, rerank_input: 1, reranked: 2};
  const key = (k) => { const [span, stage] = k.split(" "); return (stepIndex[span] ?? 999) * 10 + (stageOrder[stage] ?? 9); };
  const cands = Object.keys(groups).sort((x, y) => key(x) - key(y)).map((k) => {
    const [span, stage] = k.split(" ");
    return `<div><h3>${esc(stage)} · ${esc(stepName[span] || span)}</h3>${groups[k].sort((x, y) => x.position - y.position).map((d) => docCard(d, contextKeys)).join("")}</div>`;
  }).join("");
  const evidence = v.evidence.map((e) => `<tr><td>${esc(e.label)}</td><td>${e.quotes.map(esc).join("<br>")}</td>
    <td>${e.in_candidates ? '<span class="badge ok">retrieved</span>' : '<span class="badge bad">never retrieved</span>'}</td>
    <td>${e.in_context ? '<span class="badge ok">in context</span>' : '<span class="badge bad">not in context</span>'}</td></tr>`).join("");
  const answerStep = v.steps.find((s) => s.is_answer);
  const traceLevel = v.verdicts.filter((r) => !r.span_id), stepLevel = v.verdicts.filter((r) => r.span_id);
  const failing = v.verdicts.filter((r) => r.passed === false).length;
  const whyHtml = why(v, stepName);
  main.innerHTML = `
    <div class="card"><div class="row"><span class="mono">${esc(t.trace_id)}</span> <span class="muted">${esc(t.service_name)} · ${time(t.start_time)}</span>
      ${t.case_id ? `<span class="badge">case ${esc(t.case_id)}</span>` : ""} ${t.run_id ? `<span class="badge">run ${esc(t.run_id)}</span>` : ""}
      ${t.user_scope.length ? `<span class="badge">scope ${esc(t.user_scope.join(", "))}</span>` : ""}</div>
      <div><b>Question</b> ${esc(t.query_text)}</div><div><b>Answer</b> ${esc(t.answer_text)}</div>
      ${a ? `<div class="row" id="root-cause"><b>Root cause</b> ${causeBadge(a.root_cause)} <span class="muted">failing layers:</span> ${(a.failing_layers || []).map((l) => `<span class="badge bad">${esc(l)}</span>`).join("") || "none"}</div>` : '<div class="muted small">No attribution: the trace has no gold case.</div>'}</div>
    ${whyHtml ? `<div class="card" id="why">${whyHtml}</div>` : ""}
    ${v.evidence.length ? `<div class="card"><h3>Gold evidence</h3><table><tbody>${evidence}</tbody></table></div>` : ""}
    <div class="card"><h3>Steps</h3><table><tbody>${waterfall}</tbody></table></div>
    <div class="card"><h3>Candidates and reranking</h3><div class="docs">${cands || '<p class="muted">No retrieval.</p>'}</div></div>
    <div class="card"><h3>Final context (what the model saw)</h3><div class="docs"><div>${ctxDocs.map((d) => docCard(d, contextKeys)).join("") || '<p class="muted">No document reached the answering call.</p>'}</div>
      <div>${answerStep ? `<h3>Prompt of the answering call</h3><pre class="mono">${esc(answerStep.input_text)}</pre>` : ""}</div></div></div>
    <div class="card" id="verdicts-trace"><h3>Trace-level verdicts <span class="muted small">${failing} failing of ${v.verdicts.length} verdicts in all</span></h3>${verdictTable(traceLevel, stepName, false)}</div>
    <div class="card" id="verdicts-step"><h3>Step-level verdicts</h3>${verdictTable(stepLevel, stepName, true)}</div>`;
  paint(main);
}
