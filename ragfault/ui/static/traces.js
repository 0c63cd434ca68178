// The trace list: server-side paging with the total, filters, and the columns a bad trace is spotted by.
import {$, $$, api, esc, num, time, qs, go, hashParams, paint, pager, sortTh, causeBadge} from "./util.js";

const toLocalInput = (v) => v || "";
// filters the live page's links set (live: the traces online_health counts); kept while other filters change
const LIVE_FLAGS = ["live", "negative_feedback"];

export async function tracesPage(main, _arg, current) {
  const p = hashParams();
  const limit = [10, 25, 50, 100, 200].includes(+p.limit) ? +p.limit : 50, offset = +p.offset || 0, sort = p.sort || "start_time", desc = p.desc !== "0";
  const [overview, res] = await Promise.all([
    api("/api/v1/ui/overview"),
    api("/api/v1/ui/traces?" + qs({service: p.service, run_id: p.run_id, root_cause: p.root_cause, since: p.since,
      until: p.until, feedback: p.feedback, q: p.q, sort, desc: desc ? "true" : "false", limit, offset,
      live: p.live, live_cause: p.live_cause, negative_feedback: p.negative_feedback})),
  ]);
  if (!current()) return;
  const opt = (vals, sel, all) => [`<option value="">${esc(all)}</option>`, ...vals.map((v) => `<option ${v === sel ? "selected" : ""} value="${esc(v)}">${esc(v)}</option>`)].join("");
  main.innerHTML = `<h2>Traces</h2>
    <form class="row card" id="filters" aria-label="Filters">
      <label>Service <select name="service">${opt(overview.services || [], p.service, "any")}</select></label>
      <label>Run <select name="run_id">${opt(overview.runs.map((r) => r.run_id), p.run_id, "any")}</select></label>
      <label>Root cause <select name="root_cause">${opt(overview.root_causes, p.root_cause, "any")}</select></label>
      <label>From (UTC) <input type="datetime-local" name="since" value="${esc(toLocalInput(p.since))}"></label>
      <label>To (UTC) <input type="datetime-local" name="until" value="${esc(toLocalInput(p.until))}"></label>
      <label>Feedback <select name="feedback"><option value="">any</option><option value="true" ${p.feedback === "true" ? "selected" : ""}>has feedback</option><option value="false" ${p.feedback === "false" ? "selected" : ""}>none</option></select></label>
      <label>Search <input type="search" name="q" size="22" placeholder="question, answer or trace id" value="${esc(p.q || "")}"></label>
      <label>Live cause <select name="live_cause">${opt(overview.live_causes || [], p.live_cause, "any")}</select></label>
      <label>Per page <select name="limit">${[10, 25, 50, 100, 200].map((n) => `<option ${n === limit ? "selected" : ""}>${n}</option>`).join("")}</select></label>
      ${LIVE_FLAGS.filter((k) => p[k]).map((k) => `<input type="hidden" name="${k}" value="${esc(p[k])}"><span class="badge" data-flag="${k}">${esc(k.replace("_", " "))}: ${esc(p[k] === "true" ? "yes" : "no")}</span>`).join("")}
      <button type="submit">Filter</button>
    </form>
    <div class="card"><div class="muted small">${res.total.toLocaleString()} traces · times in ${esc(Intl.DateTimeFormat().resolvedOptions().timeZone)}</div>
    <table><thead><tr>${sortTh("start_time", "time", sort, desc)}${sortTh("service_name", "service", sort, desc)}<th>run</th><th>root cause</th>
      <th>question</th><th>answer</th>${sortTh("latency_ms", "latency", sort, desc, "num")}<th class="num">tokens</th><th class="num">spans</th><th>feedback</th></tr></thead>
    <tbody>${res.rows.map((r) => `<tr data-trace="${esc(r.trace_id)}"><td class="small"><a href="#/trace/${esc(r.trace_id)}">${time(r.start_time)}</a></td>
      <td>${esc(r.service_name)}</td><td class="nw">${esc(r.run_id)}</td><td>${r.root_cause ? causeBadge(r.root_cause) : '<span class="muted small">no gold case</span>'}</td>
      <td class="clip"><span class="clip-text">${esc(r.query_text)}</span></td><td class="clip"><span class="clip-text">${esc(r.answer_text)}</span></td>
      <td class="num">${r.latency_ms === null ? "—" : num(r.latency_ms, r.latency_ms < 10 ? 1 : 0) + " ms"}</td><td class="num">${num(r.tokens)}</td>
      <td class="num">${num(r.span_count)}${r.error_count ? ` <span class="badge bad">${r.error_count} err</span>` : ""}</td>
      <td>${r.feedback ? `<span class="badge">${r.feedback}</span>` : ""}</td></tr>`).join("") || '<tr><td colspan="10" class="muted">No trace matches.</td></tr>'}</tbody></table></div>`;
  paint(main);
  $(".card:last-child", main).appendChild(pager(res.total, offset, limit, (o) => go("traces", {...hashParams(), offset: o || ""})));
  $("#filters").addEventListener("submit", (e) => { e.preventDefault(); go("traces", {...Object.fromEntries(new FormData(e.target)), sort: p.sort, desc: p.desc}); });
  $$("button.sort", main).forEach((b) => b.addEventListener("click", () => {
    const k = b.dataset.sort;
    go("traces", {...hashParams(), sort: k, desc: sort === k && desc ? "0" : "", offset: ""});
  }));
}
