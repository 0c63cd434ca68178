// The page's router: one hash route per page; each page module renders into <main>.
import {$, $$, api, esc, forgetStoredToken, setToken, token} from "./util.js";
import {dashboardPage} from "./dashboard.js";
import {tracesPage} from "./traces.js";
import {tracePage} from "./trace.js";
import {sqlPage} from "./sql.js";
import {comparePage} from "./compare.js";
import {reviewPage, calibrationPage} from "./review.js";
import {startPage} from "./start.js";
import {coveragePage} from "./coverage.js";
import {livePage} from "./live.js";
import {triagePage} from "./triage.js";

const tokenInput = $("#token");
// the token is kept for this tab's session only (see util.js)
forgetStoredToken();
tokenInput.value = token();
tokenInput.addEventListener("change", () => { setToken(tokenInput.value); route(); });

const PAGES = {dashboard: dashboardPage, traces: tracesPage, trace: tracePage, sql: sqlPage,
  compare: comparePage, review: reviewPage, calibration: calibrationPage, coverage: coveragePage, start: startPage,
  live: livePage, triage: triagePage};

let seq = 0;
async function route() {
  const mine = ++seq;
  const main = $("#main");
  delete document.body.dataset.ready;
  let h = location.hash.replace(/^#\/?/, "");
  if (!h) {
    // an empty database opens on the first-run page
    try { const o = await api("/api/v1/ui/overview"); h = o.traces ? "dashboard" : "start"; } catch { h = "dashboard"; }
    history.replaceState(null, "", "#/" + h);
  }
  const [path] = h.split("?");
  const [page, ...rest] = path.split("/");
  $$("nav a").forEach((a) => a.classList.toggle("on", a.dataset.nav === page || (page === "trace" && a.dataset.nav === "traces")));
  const render = PAGES[page] || dashboardPage;
  try {
    await render(main, decodeURIComponent(rest.join("/")), () => mine === seq);
  } catch (e) {
    if (mine === seq) main.innerHTML = `<div class="card"><h3>Could not load this page</h3><pre class="err">${esc(e.message)}</pre></div>`;
  }
  if (mine === seq) {
    document.body.dataset.ready = page;
    document.body.dataset.renders = String(+(document.body.dataset.renders || 0) + 1);
  }
}
window.addEventListener("hashchange", route);
route();
