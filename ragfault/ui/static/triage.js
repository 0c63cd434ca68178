// Triage: the queue of live traces worth a look (GET /api/v1/triage), and one screen per trace where a
// reviewer confirms or corrects the suspected cause, picks the gold evidence (a document and a quote,
// from a candidate, the context or a registry search), the required facts and the expected behaviour,
// and saves a gold case (POST /api/v1/gold/promote).
import {$, $$, api, esc, num, time, qs, go, hashParams, paint, causeBadge} from "./util.js";

const parse = (d) => { if (typeof d !== "string") return d || null; try { return JSON.parse(d); } catch { return d; } };
const BEHAVIOURS = ["answer", "refuse", "correct_premise", "clarify"];

export async function triagePage(main, arg, current) {
  return arg ? triageScreen(main, arg, current) : triageQueue(main, current);
}

async function triageQueue(main, current) {
  const p = hashParams();
  const res = await api("/api/v1/triage?" + qs({service: p.service, per_day: p.per_day, per_service: p.per_service, limit: 200, search: "false"}));
  if (!current()) return;
  main.innerHTML = `<h2>Triage <span class="muted small">${res.count} live traces worth a look, most urgent first · <a href="#/live">live traffic</a></span></h2>
    <form class="row card" id="filters" aria-label="Filters">
      <label>Service <input name="service" size="16" value="${esc(p.service || "")}"></label>
      <label>At most per day <input name="per_day" type="number" min="1" size="5" value="${esc(p.per_day || "")}"></label>
      <label>At most per service <input name="per_service" type="number" min="1" size="5" value="${esc(p.per_service || "")}"></label>
      <button type="submit">Filter</button></form>
    <div class="card"><table id="queue"><thead><tr><th>time</th><th>service</th><th>reasons</th><th>suspected cause</th><th>question</th><th>answer</th><th class="num">thumbs down</th></tr></thead>
    <tbody>${res.items.map((r) => `<tr data-trace="${esc(r.trace_id)}"><td class="small"><a href="#/triage/${esc(r.trace_id)}">${time(r.start_time)}</a></td><td>${esc(r.service_name)}</td>
      <td>${r.reasons.map((x) => `<span class="badge ${x === "negative_feedback" ? "bad" : ""}">${esc(x)}</span>`).join("")}</td><td>${esc(r.root_cause || "—")}</td>
      <td class="clip"><span class="clip-text">${esc(r.question)}</span></td><td class="clip"><span class="clip-text">${esc(r.answer)}</span></td><td class="num">${num(r.thumbs_down)}</td></tr>`).join("")
      || '<tr><td colspan="7" class="muted">Nothing waits for a look: no negative feedback, no proven live cause, no trigger.</td></tr>'}</tbody></table></div>`;
  $("#filters").addEventListener("submit", (e) => { e.preventDefault(); go("triage", Object.fromEntries(new FormData(e.target))); });
}

/** The first sentence of a text (a quote to start from), at most 200 characters. */
function firstSentence(text) {
  const t = String(text || "").trim();
  const m = t.match(/^.+?[.!?。！？](?=\s|$)/s);
  return (m ? m[0] : t).slice(0, 200);
}

/** Candidates once each, in the order first seen, with every stage each was seen at (a document a
 * retriever returned and a reranker read and kept is one candidate, not three). */
function distinctCandidates(docs) {
  const out = new Map();
  for (const d of docs) {
    const key = d.kb_doc_id || d.doc_id || d.chunk_id || d.content || d;
    const seen = out.get(key);
    if (!seen) out.set(key, {...d, stages: [d.stage]});
    else if (!seen.stages.includes(d.stage)) seen.stages.push(d.stage);
  }
  return [...out.values()];
}

function docCard(d, where) {
  const id = d.kb_doc_id || d.doc_id || "";
  const flags = [d.stale ? '<span class="badge warn">stale</span>' : "", d.forbidden ? '<span class="badge bad">outside user scope</span>' : "",
    d.current === false ? '<span class="badge warn">not current</span>' : ""].join("");
  return `<div class="doc" data-doc="${esc(id)}" data-where="${esc(where)}"><div><span class="mono">${esc(id || "(no id)")}</span>
    ${d.title ? `<b>${esc(d.title)}</b>` : ""} ${d.score !== null && d.score !== undefined ? `<span class="muted">score ${num(d.score)}</span>` : ""} ${flags}
    ${d.stages ? `<span class="muted small" data-stages>${esc(d.stages.join(" · "))}</span>` : ""}
    ${id ? `<button type="button" class="use" data-doc="${esc(id)}">Use as evidence</button>` : '<span class="muted small">no document id</span>'}</div>
    <div class="text">${esc(d.content || "")}</div></div>`;
}

function evidenceBlock(item) {
  if (!item.live) return '<p class="muted">Live attribution has not evaluated this trace (or it joins a gold case).</p>';
  const layers = item.live.failing_layers || [];
  return `<div class="row" id="suspected"><b>Suspected</b> <span class="badge ${layers.length ? "bad" : ""}" data-cause="${esc(item.live.root_cause)}">${esc(item.live.root_cause)}</span>
      <span class="muted small">basis ${esc(item.live.basis)}${item.live.missing_fields?.length ? " · the trace lacks " + esc(item.live.missing_fields.join(", ")) : ""}</span>
      ${layers.map((l) => `<span class="badge bad">${esc(l)}</span>`).join("")}</div>
    <div id="layer-evidence">${evidenceTables(layers, item.live.evidence)}</div>`;
}

// Fields evidence rows often carry, shown first in this order (what, where it was cut, how sure);
// any other field follows by name: a field nobody listed here is shown all the same.
const FIRST = ["doc_id", "claim", "verdict", "sentence", "quote", "text", "step", "span_id", "candidate_span_id",
  "candidate_rank", "score", "coverage", "via", "terms", "gap", "filled"];
const FAILED = new Set(["unsupported", "contradicted", "invalid"]);
const isRecord = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isRecords = (v) => Array.isArray(v) && v.length > 0 && v.every(isRecord);
const order = (k) => { const i = FIRST.indexOf(k); return i < 0 ? FIRST.length : i; };

function cell(v) {
  if (v === null || v === undefined) return '<td class="muted">—</td>';
  if (typeof v === "number") return `<td class="num">${num(v)}</td>`;
  if (typeof v === "boolean") return `<td>${v ? "yes" : "no"}</td>`;
  if (Array.isArray(v) && !v.some((x) => x !== null && typeof x === "object")) return `<td>${v.length ? esc(v.join(", ")) : '<span class="muted">none</span>'}</td>`;
  if (typeof v === "object") return `<td class="mono">${esc(JSON.stringify(v))}</td>`;
  return `<td>${esc(v)}</td>`;
}

/** Records as rows: one column a field any of them has, so rows of different shapes share a table. */
function recordsTable(name, rows) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  return `<table class="evidence-rows" data-list="${esc(name)}">${name ? `<caption>${esc(name)}</caption>` : ""}
    <thead><tr>${keys.map((k) => `<th>${esc(k)}</th>`).join("")}</tr></thead>
    <tbody>${rows.map((r) => `<tr class="${FAILED.has(r.verdict ?? r.label) ? "fail" : ""}">${keys.map((k) => cell(r[k])).join("")}</tr>`).join("")}</tbody></table>`;
}

/** The evidence behind one layer, whatever its shape: each list of records as a table of rows, the
 * rest as a key/value table (an evidence shape this page does not know is shown, never dropped). */
function layerEvidence(layer, raw) {
  const d = parse(raw);
  const lists = [], pairs = [];
  if (isRecords(d)) lists.push(["", d]);
  else if (isRecord(d)) for (const [k, v] of Object.entries(d)) (isRecords(v) ? lists : pairs).push([k, v]);
  else if (d !== null && d !== undefined) pairs.push(["value", d]);
  const kv = pairs.length ? `<table class="evidence-facts"><tbody>${pairs.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th>${cell(v)}</tr>`).join("")}</tbody></table>` : "";
  const body = lists.map(([k, rows]) => recordsTable(k, rows)).join("") + kv;
  return `<section class="layer" data-layer="${esc(layer)}"><h4>${causeBadge(layer)}</h4>
    ${body || '<p class="muted small">The verdict behind this layer kept no details.</p>'}</section>`;
}

/** A section per failing layer (in attribution's order), then any other layer the evidence names. */
export function evidenceTables(layers, evidence) {
  const ev = parse(evidence);
  const all = isRecord(ev) ? ev : ev === null || ev === undefined ? {} : {evidence: ev};
  const names = [...layers, ...Object.keys(all).filter((k) => !layers.includes(k))];
  const out = names.map((l) => layerEvidence(l, all[l])).join("");
  return out ? `<div class="scroll">${out}</div>` : "";
}

async function triageScreen(main, id, current) {
  const [item, view, overview] = await Promise.all([
    api("/api/v1/ui/triage/item?" + qs({trace_id: id})),
    api(`/api/v1/traces/${encodeURIComponent(id)}/view`),
    api("/api/v1/ui/overview"),
  ]);
  const t = view.trace;
  const hits = t.query_text ? await api("/api/v1/ui/registry?" + qs({q: t.query_text})) : [];
  if (!current()) return;
  const docs = view.documents;
  const ctx = docs.filter((d) => d.stage === "context");
  const cands = distinctCandidates(docs.filter((d) => d.stage !== "context"));
  const suggested = item.live && overview.root_causes.includes(item.live.root_cause) ? item.live.root_cause : "";
  const fb = item.feedback;
  const who = localStorage.getItem("ragfault-annotator") || "";
  const done = item.promoted || item.case;
  main.innerHTML = `<h2>Triage <span class="muted small"><a href="#/triage">queue</a> · <a href="#/trace/${esc(t.trace_id)}">full trace</a></span></h2>
    <div class="card" id="triage-head"><div class="row"><span class="mono">${esc(t.trace_id)}</span> <span class="muted">${esc(t.service_name)} · ${time(t.start_time)}</span></div>
      <div><b>Question</b> <span id="question">${esc(t.query_text)}</span></div><div><b>Answer</b> <span id="answer">${esc(t.answer_text)}</span></div>
      ${fb ? `<div class="row small" id="feedback"><b>Feedback</b> ${fb.thumbs_down ? `<span class="badge bad">thumbs down ${fb.thumbs_down}</span>` : ""}${fb.thumbs_up ? `<span class="badge ok">thumbs up ${fb.thumbs_up}</span>` : ""}
        ${fb.mean_score !== null ? `<span class="badge">score ${num(fb.mean_score, 2)}</span>` : ""}${(fb.comments || []).map((c) => `<span class="badge">“${esc(c)}”</span>`).join("")}</div>` : ""}
      ${evidenceBlock(item)}
      ${done ? `<p id="promoted" class="badge ok">Promoted: gold case ${esc((item.promoted || item.case).case_id)}${item.case ? " · attribution now " + esc(item.case.root_cause) : ""}</p>` : ""}</div>
    <div class="docs"><div class="card" id="candidates"><h3>Candidates (${cands.length})</h3>${cands.map((d) => docCard(d, "candidate")).join("") || '<p class="muted">No candidate recorded.</p>'}</div>
      <div class="card" id="context"><h3>Final context (${ctx.length})</h3>${ctx.map((d) => docCard(d, "context")).join("") || '<p class="muted">No document reached the answering call.</p>'}</div></div>
    <div class="card" id="registry"><h3>Registry search</h3>
      <form class="row" id="registry-form"><input type="search" name="q" size="60" value="${esc(t.query_text || "")}" aria-label="Search the knowledge base"><button type="submit">Search</button></form>
      <div id="registry-hits"></div></div>
    <form class="card" id="promote-form"><h3>Gold case</h3>
      <div class="row"><label>Root cause <select name="cause" required><option value="">choose…</option>${overview.root_causes.map((c) => `<option ${c === suggested ? "selected" : ""}>${esc(c)}</option>`).join("")}</select></label>
        <label>Expected behaviour <select name="expected_behavior">${BEHAVIOURS.map((b) => `<option>${esc(b)}</option>`).join("")}</select></label>
        <label>Dataset <input name="dataset" size="12" value="production"></label></div>
      <h4 class="small">Gold evidence <span class="muted">(“Use as evidence” on a document above; select text in it first to quote that)</span></h4>
      <table id="evidence"><tbody></tbody></table>
      <label>Required facts, one a line <textarea name="facts" rows="3" placeholder="e.g. Refunds within 30 days"></textarea></label>
      <div class="row"><label>Your name <input name="user" required size="14" value="${esc(who)}"></label><label>Note <input name="notes" size="40"></label>
        <button type="submit" class="primary">Save the gold case</button></div>
      <p role="status" id="promote-status" class="small"></p></form>`;
  paint($("#triage-head"));
  const hitsEl = $("#registry-hits");
  const drawHits = (rows) => { hitsEl.innerHTML = rows.map((d) => docCard(d, "registry")).join("") || '<p class="muted">No registry document matches.</p>'; };
  drawHits(hits);
  $("#registry-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = e.target.q.value.trim();
    drawHits(q ? await api("/api/v1/ui/registry?" + qs({q})) : []);
  });
  const evidence = $("#evidence tbody");
  main.addEventListener("click", (e) => {
    const b = e.target.closest("button.use");
    if (!b) return;
    const card = b.closest(".doc");
    const sel = String(window.getSelection() || "").trim();
    const text = $(".text", card).textContent;
    const quote = sel && text.includes(sel) ? sel : firstSentence(text);
    const tr = document.createElement("tr");
    tr.innerHTML = `<td class="mono">${esc(b.dataset.doc)}</td><td class="small muted">${esc(card.dataset.where)}</td>
      <td><input name="quote" size="60" aria-label="Quote" value="${esc(quote)}"></td><td><button type="button" class="remove">Remove</button></td>`;
    tr.dataset.doc = b.dataset.doc;
    evidence.appendChild(tr);
    $(".remove", tr).addEventListener("click", () => tr.remove());
  });
  let saving = false;
  $("#promote-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (saving) return;
    const f = e.target, status = $("#promote-status");
    const facts = f.facts.value.split("\n").map((s) => s.trim()).filter(Boolean).map((text, i) => ({id: `f${i + 1}`, text}));
    const ev = $$("tr", evidence).map((tr) => ({doc_id: tr.dataset.doc, quote: $("input", tr).value.trim() || null}));
    const body = {trace_id: t.trace_id, cause: f.cause.value, expected_behavior: f.expected_behavior.value, evidence: ev,
      required_facts: facts, dataset: f.dataset.value.trim() || "production", user: f.user.value.trim(), notes: f.notes.value.trim() || null};
    saving = true;
    localStorage.setItem("ragfault-annotator", body.user);
    status.textContent = "Saving…";
    try {
      const out = await api("/api/v1/gold/promote", body);
      status.innerHTML = `Saved gold case <b id="saved-case">${esc(out.case_id)}</b> in ${esc(out.dataset)}; attribution with it: ${causeBadge(out.root_cause)} · <a href="#/trace/${esc(out.trace_id)}">open the trace</a>`;
      paint(status);
    } catch (err) {
      status.textContent = "Not saved: " + err.message;
    } finally { saving = false; }
  });
}
