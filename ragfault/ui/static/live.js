// The live page: production traffic (traces without a gold case) by hour and service — online_health's
// volume, rates and latency, the causes live_attribution proves, feedback, and the triage backlog.
// Every bar and point links to the trace list filtered to the traces it counts.
import {$, api, esc, num, pct, time, qs, go, hashParams, paint, colour} from "./util.js";

const PALETTE = ["#0969da", "#bf3989", "#1a7f37", "#bf8700", "#8250df", "#cf222e", "#1b7c83", "#57606a"];
const LIVE_COLOURS = {insufficient_trace: "#afb8c1", none_seen: "#d0d7de"};
const causeColour = (c) => LIVE_COLOURS[c] || colour(c);
const HOUR = 3600e3;
const iso = (ms) => new Date(ms).toISOString().slice(0, 19);
const hourMs = (h) => Date.parse(String(h).replace(" ", "T").slice(0, 19) + "Z");

/** The hours from the first to the last of ``rows`` (every hour, so a quiet hour shows as a gap). */
function hoursOf(...rowLists) {
  const all = rowLists.flat().map((r) => hourMs(r.hour));
  if (!all.length) return [];
  const lo = Math.min(...all), hi = Math.max(...all), out = [];
  for (let t = lo; t <= hi && out.length < 24 * 31; t += HOUR) out.push(t);
  return out;
}

/** The trace list of one hour (and service, and more filters). */
const traceLink = (t, filters) => "#/traces?" + qs({...filters, since: iso(t), until: iso(t + HOUR)});

/** Stacked bars by hour: ``series`` [{key, label, colour, values: Map(hour ms -> n), filters}]. */
function bars(hours, series, title, unit) {
  const W = 620, H = 170, left = 34, base = H - 18;
  const totals = hours.map((t) => series.reduce((s, x) => s + (x.values.get(t) || 0), 0));
  const max = Math.max(1, ...totals);
  const step = (W - left) / Math.max(1, hours.length), bw = Math.max(2, Math.min(36, step - 2));
  let body = "";
  hours.forEach((t, i) => {
    let y = base;
    for (const s of series) {
      const n = s.values.get(t) || 0;
      if (!n) continue;
      const h = (base - 10) * n / max;
      y -= h;
      body += `<a href="${esc(traceLink(t, s.filters))}" data-hour="${esc(iso(t))}" data-key="${esc(s.key)}" data-n="${n}">
        <rect x="${(left + i * step).toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${esc(s.colour)}">
        <title>${esc(iso(t).slice(0, 13))}h UTC · ${esc(s.label)}: ${n} ${esc(unit)}</title></rect></a>`;
    }
  });
  return svg(W, H, left, hours, step, body, `${num(max)}`, title);
}

/** One line per series by hour; an hour where the value is not applicable is a gap. ``top``: the
 * axis' top (1 for a rate), else the largest value. */
function lines(hours, series, title, fmt, top) {
  const W = 620, H = 120, left = 40, base = H - 18;
  const vals = series.flatMap((s) => [...s.values.values()]).filter((v) => v !== null);
  const max = top || Math.max(1e-9, ...vals);
  const step = (W - left) / Math.max(1, hours.length), bw = Math.max(2, Math.min(36, step - 2));
  const x = (i) => left + i * step + bw / 2, y = (v) => base - (base - 10) * v / max;
  let body = "";
  for (const s of series) {
    let path = "", pen = false;
    hours.forEach((t, i) => {
      const v = s.values.get(t);
      if (v === null || v === undefined) { pen = false; return; }
      path += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)} `;
      pen = true;
      body += `<a href="${esc(traceLink(t, s.filters))}" data-hour="${esc(iso(t))}" data-key="${esc(s.key)}"><circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${esc(s.colour)}">
        <title>${esc(iso(t).slice(0, 13))}h UTC · ${esc(s.label)}: ${esc(fmt(v))}</title></circle></a>`;
    });
    if (path) body = `<path d="${path}" fill="none" stroke="${esc(s.colour)}" stroke-width="1.5"></path>` + body;
  }
  return svg(W, H, left, hours, step, body, fmt(max), title);
}

function svg(W, H, left, hours, step, body, top, title) {
  const every = Math.max(1, Math.ceil(hours.length / 6));
  const ticks = hours.map((t, i) => i % every ? "" : `<text x="${(left + i * step).toFixed(1)}" y="${H - 4}">${esc(iso(t).slice(5, 13).replace("T", " "))}h</text>`).join("");
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}"><text x="0" y="12">${esc(top)}</text><text x="0" y="${H - 18}">0</text>${body}${ticks}</svg>`;
}

const legend = (series) => `<div class="legend">${series.map((s) => `<span><span class="swatch" data-colour="${esc(s.colour)}"></span>${esc(s.label)}</span>`).join("")}</div>`;

export async function livePage(main, _arg, current) {
  const p = hashParams();
  const d = await api("/api/v1/ui/live?" + qs({since: p.since, until: p.until, service: p.service}));
  if (!current()) return;
  const services = [...new Set([...d.health, ...d.causes, ...d.backlog].map((r) => r.service_name))].sort();
  const svc = Object.fromEntries(services.map((s, i) => [s, PALETTE[i % PALETTE.length]]));
  const hours = hoursOf(d.health, d.causes);
  const perService = (column, filters) => services.map((s) => ({
    key: s, label: s, colour: svc[s], filters: {live: "true", service: s, ...filters},
    values: new Map(d.health.filter((r) => r.service_name === s && r[column] !== null).map((r) => [hourMs(r.hour), r[column]])),
  }));
  const opt = services.map((s) => `<option ${s === p.service ? "selected" : ""}>${esc(s)}</option>`).join("");
  const traces = d.health.reduce((n, r) => n + r.traces, 0);
  main.innerHTML = `<h2>Live traffic <span class="muted small">traces without a gold case · ${traces.toLocaleString()} in ${hours.length} hour${hours.length === 1 ? "" : "s"} from ${time(d.since)} · hours in UTC</span></h2>
    <form class="row" id="filters" aria-label="Filters">
      <label>Service <select name="service"><option value="">every service</option>${opt}</select></label>
      <label>From (UTC) <input type="datetime-local" name="since" value="${esc(p.since || "")}"></label>
      <label>To (UTC) <input type="datetime-local" name="until" value="${esc(p.until || "")}"></label>
      <button type="submit">Apply</button> <a href="#/triage">Triage queue</a></form>
    ${hours.length ? "" : '<div class="card"><p class="muted">No settled live trace in these hours. Traces with a gold case are on the dashboard.</p></div>'}
    <div class="grid2"><div class="card" id="volume-card"></div><div class="card" id="feedback-card"></div></div>
    <div class="card" id="causes-card"></div>
    <div class="grid2"><div class="card" id="rates-card"></div><div class="card" id="latency-card"></div></div>
    <div class="card" id="backlog-card"></div>`;
  $("#filters").addEventListener("submit", (e) => { e.preventDefault(); go("live", Object.fromEntries(new FormData(e.target))); });
  if (hours.length) {
    const volume = perService("traces", {});
    $("#volume-card").innerHTML = `<h3>Traces per hour</h3>${bars(hours, volume, "Live traces per hour and service", "traces")}${legend(volume)}`;
    const fb = perService("negative_feedback_traces", {negative_feedback: "true"});
    const sums = services.map((s) => {
      const rows = d.health.filter((r) => r.service_name === s);
      const scored = rows.filter((r) => r.mean_feedback_score !== null);
      return `<tr><td>${esc(s)}</td><td class="num">${num(rows.reduce((n, r) => n + r.negative_feedback_traces, 0))}</td><td class="num">${num(rows.reduce((n, r) => n + r.thumbs_down, 0))}</td>
        <td class="num">${scored.length ? num(scored.reduce((n, r) => n + r.mean_feedback_score, 0) / scored.length, 2) : "n/a"}</td></tr>`;
    }).join("");
    $("#feedback-card").innerHTML = `<h3>Negative feedback per hour</h3>${bars(hours, fb, "Traces with negative feedback per hour and service", "traces with negative feedback")}${legend(fb)}
      <table class="small"><thead><tr><th>service</th><th class="num">traces with negative feedback</th><th class="num">thumbs down</th><th class="num">mean score (hours scored)</th></tr></thead><tbody>${sums}</tbody></table>`;
    renderCauses(d, hours, services);
    const rates = [["empty_retrieval_rate", "empty retrieval"], ["unsupported_claim_rate", "unsupported claims"], ["refusal_rate", "refusals"], ["retrieval_skipped_rate", "retrieval skipped"]];
    $("#rates-card").innerHTML = `<h3>Rates per hour <span class="muted small">over the traces where each applies; a gap: not applicable</span></h3>
      ${rates.map(([col, label]) => { const s = perService(col, {}); return `<h4 class="small">${esc(label)}</h4>${lines(hours, s, label + " per hour", pct, 1)}`; }).join("")}${legend(perService("traces", {}))}`;
    const lat = perService("latency_p95_ms", {});
    $("#latency-card").innerHTML = `<h3>Latency p95 per hour</h3>${lines(hours, lat, "Latency p95 per hour", (v) => num(v, 0) + " ms")}${legend(lat)}`;
  }
  renderBacklog(d);
  paint(main);
}

function renderCauses(d, hours, services) {
  const causes = [...new Set(d.causes.map((r) => r.root_cause))];
  const el = $("#causes-card");
  const charts = services.filter((s) => d.causes.some((r) => r.service_name === s)).map((s) => {
    const series = causes.map((c) => ({key: c, label: c, colour: causeColour(c), filters: {live_cause: c, service: s},
      values: new Map(d.causes.filter((r) => r.service_name === s && r.root_cause === c).map((r) => [hourMs(r.hour), r.traces]))}));
    return `<div data-service="${esc(s)}"><h4 class="small">${esc(s)}</h4>${bars(hours, series, "Live root causes per hour of " + s, "traces")}</div>`;
  }).join("");
  el.innerHTML = `<h3>Root causes live attribution proves, per hour and service <span class="muted small">none_seen: nothing wrong seen (no reference to say ok)</span></h3>
    ${charts ? `<div class="grid2">${charts}</div>${legend(causes.map((c) => ({label: c, colour: causeColour(c)})))}` : '<p class="muted">No live trace evaluated yet.</p>'}`;
}

function renderBacklog(d) {
  const el = $("#backlog-card");
  const reasons = ["negative_feedback", "live_attribution", "trigger"];
  const by = {};
  for (const r of d.backlog) (by[r.service_name] ||= {})[r.reason] = r.traces;
  const rows = Object.keys(by).sort().map((s) => `<tr><td>${esc(s)}</td>${reasons.map((k) => `<td class="num">${num(by[s][k] || 0)}</td>`).join("")}</tr>`).join("");
  el.innerHTML = `<h3>Triage backlog <span class="muted small">live traces worth a look (a trace may have several reasons)${d.backlog_capped ? " · counted up to the first 100,000" : ""} · <a href="#/triage">open the queue</a></span></h3>
    ${rows ? `<table class="small"><thead><tr><th>service</th>${reasons.map((k) => `<th class="num">${esc(k.replace("_", " "))}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">Nothing waits for a look.</p>'}
    ${d.queue.length ? `<h4 class="small">Most urgent</h4><table id="backlog"><thead><tr><th>time</th><th>service</th><th>reasons</th><th>suspected</th><th>question</th><th class="num">thumbs down</th></tr></thead><tbody>
      ${d.queue.map((r) => `<tr data-trace="${esc(r.trace_id)}"><td class="small"><a href="#/triage/${esc(r.trace_id)}">${time(r.start_time)}</a></td><td>${esc(r.service_name)}</td>
        <td>${r.reasons.map((x) => `<span class="badge ${x === "negative_feedback" ? "bad" : ""}">${esc(x)}</span>`).join("")}</td>
        <td><span class="badge"><span class="swatch" data-colour="${esc(causeColour(r.root_cause))}"></span>${esc(r.root_cause || "—")}</span></td>
        <td class="clip"><span class="clip-text">${esc(r.question)}</span></td><td class="num">${num(r.thumbs_down)}</td></tr>`).join("")}</tbody></table>` : ""}`;
}
