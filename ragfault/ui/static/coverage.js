// What the traces carry that attribution needs (GET /api/v1/coverage, as `ragfault doctor` prints
// it): per service and convention, each field's share with its fraction, gaps marked, and the fix
// for each gap beside it.
import {$, $$, api, esc, qs, hashParams} from "./util.js";

const STATUS = {ok: '<span class="badge ok">ok</span>', gap: '<span class="badge bad">gap</span>',
  not_applicable: '<span class="badge">n/a</span>'};

/** A share as a percentage with its fraction: 80 % (4/5); n/a when the denominator is 0. A gap never
 * reads 100 % and a carried field never reads 0 %. */
export function shareText(f) {
  const fraction = `(${f.carried.toLocaleString()}/${f.denominator.toLocaleString()})`;
  if (!f.denominator || f.share === null || f.share === undefined) return `n/a ${fraction}`;
  let p = Math.round(1000 * f.share) / 10;
  let s = `${p} %`;
  if (p >= 100 && f.carried < f.denominator) s = "> 99.9 %";
  else if (p <= 0 && f.carried > 0) s = "< 0.1 %";
  return `${s} ${fraction}`;
}

/** Fix text with its `code` spans as <code> (the rest escaped). */
const richText = (t) => esc(t).replace(/`([^`]+)`/g, "<code>$1</code>");

export async function coveragePage(main, _arg, current) {
  const p = hashParams();
  const rep = await api("/api/v1/coverage?" + qs({service: p.service}));
  if (!current()) return;
  const groups = rep.groups || [];
  const row = (f) => `<tr class="${f.status === "gap" ? "fail" : ""}" data-field="${esc(f.field)}" data-status="${esc(f.status)}">
    <th scope="row" class="nw field">${esc(f.field)}</th>
    <td class="num" data-role="share">${esc(shareText(f))}</td>
    <td>${STATUS[f.status] || esc(f.status)}</td>
    <td class="small muted needed">${esc(f.needed_by || "")}</td>
    <td class="fix" data-role="fix">${f.status === "gap" && f.fix ? richText(f.fix) : ""}</td></tr>`;
  const group = (g, i) => `<section class="card cov-group" id="cov-${i}" tabindex="-1" data-service="${esc(g.service_name)}" data-convention="${esc(g.convention)}"
      aria-labelledby="cov-h-${i}">
    <h3 id="cov-h-${i}">${esc(g.service_name)} <span class="muted">· ${esc(g.convention)} · ${g.traces.toLocaleString()} traces</span>
      ${g.gaps.length ? `<span class="badge bad">${g.gaps.length} ${g.gaps.length === 1 ? "gap" : "gaps"}</span>` : '<span class="badge ok">no gap</span>'}</h3>
    <div class="scroll"><table class="coverage"><thead><tr><th scope="col">field</th><th scope="col" class="num">traces carrying it</th><th scope="col">status</th>
      <th scope="col">needed by</th><th scope="col">how to fill the gap</th></tr></thead>
    <tbody>${g.fields.map(row).join("")}</tbody></table></div></section>`;
  const summary = groups.map((g, i) => `<li><button class="link" data-goto="cov-${i}">${esc(g.service_name)} · ${esc(g.convention)}</button>
    <span class="muted small">${g.traces.toLocaleString()} traces, ${g.gaps.length ? esc(g.gaps.join(", ")) : "no gap"}</span></li>`).join("");
  main.innerHTML = `<h2>Coverage</h2>
    <div class="card"><p class="small muted">Per service and convention (the conventions the steps were read with), the share of settled traces that carry each thing
      attribution needs, over the traces it is counted over (all, or those with candidates, a rerank step or an LLM step); n/a when there are none.
      The same report as <code>ragfault doctor</code> and <code>GET /api/v1/coverage</code>.</p>
      ${groups.length ? `<ul class="plain" id="cov-summary">${summary}</ul>` : '<p id="cov-summary">No settled traces yet: send some (OTLP to /v1/traces) and come back.</p>'}</div>
    ${groups.map(group).join("")}`;
  $$("button[data-goto]", main).forEach((b) => b.addEventListener("click", () => {
    const target = $("#" + b.dataset.goto, main);
    target.scrollIntoView({block: "start"});
    target.focus({preventScroll: true});
  }));
}
