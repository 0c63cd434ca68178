// The review queue for human labels (one screen per item, keyboard shortcuts) and the judge's
// calibration against those labels.
import {$, $$, api, esc, num, pct, time, go, hashParams} from "./util.js";

let queue = null;

export async function reviewPage(main, _arg, current) {
  const p = hashParams();
  const size = +p.size || 30;
  if (!queue || queue.size !== size) queue = {size, ...(await api(`/api/v1/ui/review?size=${size}`)), done: 0};
  if (!current()) return;
  const annotator = localStorage.getItem("ragfault-annotator") || "";
  if (!queue.items.length) {
    main.innerHTML = `<h2>Review</h2><div class="card"><p>Nothing to review: every item the judge labelled has a human label, or the judge has not run yet
      (configure a <code>[judge]</code> table). Labelled so far: see <a href="#/calibration">Calibration</a>.</p></div>`;
    return;
  }
  const i = Math.min(+p.i || 0, queue.items.length - 1);
  const it = queue.items[i];
  const detail = await api("/api/v1/ui/review/item?" + new URLSearchParams({trace_id: it.trace_id, metric: it.metric, ...(it.claim !== null ? {claim: it.claim} : {})}));
  if (!current()) return;
  const keys = it.labels.map((l, k) => [String(k + 1), l]);
  main.innerHTML = `<h2>Review <span class="muted small">item ${i + 1} of ${queue.items.length} · week ${esc(queue.week)} · ${esc(it.why === "changed" ? "the judge changed its label" : "drawn at random")}</span></h2>
    <div class="card" id="review-item">
      <div class="small muted">${esc(it.metric)} · judge ${esc(it.model)} @ ${esc(it.prompt_version)} · ${time(it.scored_at)} · <a href="#/trace/${esc(it.trace_id)}">open the trace</a></div>
      <div><b>Question</b> ${esc(detail.trace.query_text)}</div>
      <div><b>Answer</b> ${esc(detail.trace.answer_text)}</div>
      ${it.claim !== null ? `<div class="review-claim" id="claim">${esc(it.claim)}</div>` : '<div class="review-claim">The whole answer</div>'}
      <p>The judge said <span class="badge ${it.label === "supported" || it.label === "pass" ? "ok" : "bad"}" id="judge-label">${esc(it.label)}</span>
        ${it.previous_label ? `<span class="muted small">(before: ${esc(it.previous_label)}, ${esc(it.previous_version)})</span>` : ""}
        ${detail.reason ? `<br><span class="muted">Reason / evidence:</span> ${esc(detail.reason)}` : ""}</p>
      <details ${detail.context.length <= 3 ? "open" : ""}><summary>Context the model saw (${detail.context.length} passages)</summary>
        ${detail.context.map((c) => `<div class="doc"><div class="text">${esc(c)}</div></div>`).join("")}</details>
      <form id="label-form">
        <div class="row"><label>Your name <input name="annotator" required size="14" value="${esc(annotator)}"></label>
          <label>Note <input name="note" size="40"></label></div>
        <div class="labels" role="group" aria-label="Your label">${keys.map(([k, l]) => `<button type="submit" name="label" value="${esc(l)}" data-key="${k}"><span class="kbd">${k}</span> ${esc(l)}</button>`).join("")}
          <button type="button" id="skip"><span class="kbd">s</span> skip</button>
          <button type="button" id="prev" ${i === 0 ? "disabled" : ""}><span class="kbd">k</span> previous</button></div>
        <p class="small muted" role="status" id="review-status">Keys: ${keys.map(([k, l]) => `<span class="kbd">${k}</span> ${esc(l)}`).join(", ")}, <span class="kbd">s</span> skip, <span class="kbd">k</span> back.</p>
      </form></div>`;
  const next = () => go("review", {...hashParams(), i: i + 1 < queue.items.length ? i + 1 : i});
  let submitting = false;
  const submit = async (label) => {
    if (submitting) return;
    const f = $("#label-form");
    const who = f.annotator.value.trim();
    if (!who) { f.annotator.focus(); $("#review-status").textContent = "Enter your name first: labels are stored with their annotator."; return; }
    submitting = true;
    localStorage.setItem("ragfault-annotator", who);
    const body = {trace_id: it.trace_id, metric: it.metric, label, annotator: who, claim: it.claim, span_id: it.span_id, note: f.note.value || null};
    try {
      await api("/api/v1/labels", body);
      it.labelled = label;
      $("#review-status").textContent = `Stored “${label}”.`;
      if (i + 1 < queue.items.length) next(); else { queue = null; go("review", {}); }
    } catch (e) { $("#review-status").textContent = "Could not store the label: " + e.message; submitting = false; }
  };
  $("#label-form").addEventListener("submit", (e) => { e.preventDefault(); submit(e.submitter?.value); });
  $("#skip").addEventListener("click", next);
  $("#prev").addEventListener("click", () => go("review", {...hashParams(), i: Math.max(0, i - 1)}));
  const onKey = (e) => {
    if (!document.body.contains($("#label-form"))) { document.removeEventListener("keydown", onKey); return; }
    if (e.target.matches("input, textarea, select") || e.ctrlKey || e.metaKey || e.altKey) return;
    const hit = keys.find(([k]) => k === e.key);
    if (hit) { e.preventDefault(); submit(hit[1]); }
    else if (e.key === "s") { e.preventDefault(); next(); }
    else if (e.key === "k" && i > 0) { e.preventDefault(); go("review", {...hashParams(), i: i - 1}); }
  };
  document.addEventListener("keydown", onKey);
  $$("[data-key]")[0]?.focus();
}

function confusion(metric, matrix) {
  const humans = Object.keys(matrix).sort();
  if (!humans.length) return "";
  const judges = [...new Set(humans.flatMap((h) => Object.keys(matrix[h])))].sort();
  return `<table class="small confusion"><caption class="muted">${esc(metric)}: human label (rows) × judge label (columns)</caption>
    <thead><tr><th></th>${judges.map((j) => `<th class="num">${esc(j)}</th>`).join("")}</tr></thead>
    <tbody>${humans.map((h) => `<tr><th>${esc(h)}</th>${judges.map((j) => `<td class="num ${h === j ? "agree" : ""}">${matrix[h][j] || 0}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

export async function calibrationPage(main, _arg, current) {
  const r = await api("/api/v1/judge/calibration");
  if (!current()) return;
  const versions = r.versions || [];
  const body = versions.map((v) => {
    const metrics = Object.entries(v.metrics || {});
    return `<div class="card"><h3>${esc(v.model)} @ ${esc(v.prompt_version)} <span class="muted small">overall ${v.overall.accuracy === null ? "n/a" : pct(v.overall.accuracy)} of ${v.overall.n} pairs · ${v.unmatched_labels} labels without a verdict of this version</span></h3>
      ${metrics.length ? `<table><thead><tr><th>metric</th><th class="num">n</th><th class="num">accuracy</th><th class="num">Cohen's κ</th><th>bias per label (judge − human) / n</th></tr></thead><tbody>
      ${metrics.map(([m, s]) => `<tr><td>${esc(m)}</td><td class="num">${s.n}</td><td class="num">${s.accuracy === null ? "n/a" : pct(s.accuracy)}</td><td class="num">${s.kappa === null ? "n/a" : num(s.kappa)}</td>
        <td>${Object.entries(s.labels || {}).map(([l, b]) => `<span class="badge ${Math.abs(b.bias) >= 0.1 ? "warn" : ""}" title="judge ${b.judge}, humans ${b.human}">${esc(l)} ${b.bias > 0 ? "+" : ""}${num(b.bias, 2)}</span>`).join(" ")}</td></tr>`).join("")}</tbody></table>`
      : '<p class="muted">No human label pairs with a verdict of this version yet.</p>'}
      ${metrics.map(([m, s]) => confusion(m, s.confusion || {})).join("")}</div>`;
  }).join("");
  const d = r.drift;
  main.innerHTML = `<h2>Judge calibration <span class="muted small">${r.human_labels} human labels · <a href="#/review">review queue</a></span></h2>
    ${body || '<div class="card"><p class="muted">The judge has not scored anything yet.</p></div>'}
    <div class="card" id="drift"><h3>Drift on the anchor set</h3>${d ? `<pre class="mono">${esc(JSON.stringify(d, null, 1))}</pre>` : '<p class="muted">No drift report: it needs two judge versions that scored the anchor set.</p>'}</div>`;
}
