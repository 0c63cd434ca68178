// The first-run page: where to send traces, how to load gold cases and the knowledge base, and a
// button that loads the demo into this server.
import {$, api, esc, go} from "./util.js";

export async function startPage(main, _arg, current) {
  const o = await api("/api/v1/ui/overview");
  if (!current()) return;
  const host = location.hostname || "127.0.0.1";
  const origin = location.origin;
  main.innerHTML = `<h2>Getting started</h2>
    <div class="card"><p>${o.traces ? `This server holds ${o.traces.toLocaleString()} traces (${o.evaluated.toLocaleString()} evaluated), ${o.gold_cases} gold cases and ${o.kb_documents} knowledge-base documents.`
      : "This server holds no trace yet."}</p>
    <ol class="steps-ol">
      <li><b>Send traces.</b> Point your app's OpenTelemetry exporter here:
        <pre class="mono">OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${esc(origin)}/v1/traces   # OTLP/HTTP (protobuf or JSON)
OTEL_EXPORTER_OTLP_ENDPOINT=http://${esc(host)}:${esc(o.grpc_port ?? 4317)}              # OTLP/gRPC</pre>
        Any OpenInference or OpenTelemetry GenAI instrumentation works (LlamaIndex, LangChain, OpenAI…). Tag a request with <code>ragfault.case_id</code> and <code>ragfault.run_id</code> span attributes to tie it to a gold case and an experiment run.</li>
      <li><b>Load gold cases</b> (JSONL, one case a line: question, evidence, required facts):
        <pre class="mono">ragfault load gold cases.jsonl --server ${esc(origin)}
curl -X POST --data-binary @cases.jsonl '${esc(origin)}/api/v1/gold?dataset=my-set'</pre></li>
      <li><b>Load the knowledge base</b> the evidence points into (JSONL: doc_id and content; optional title, version, valid_from, superseded_by, acl):
        <pre class="mono">ragfault load kb kb.jsonl --server ${esc(origin)}
curl -X POST --data-binary @kb.jsonl ${esc(origin)}/api/v1/kb</pre></li>
      <li><b>Read the results</b> on the <a href="#/dashboard">dashboard</a>, or run <code>ragfault report --server ${esc(origin)}</code>.</li>
    </ol></div>
    <div class="card"><h3>Try it with the demo</h3><p>Loads the helpdesk demo's knowledge base and gold set into this server and sends its sample app's traces here: 17 requests with a gold case (12 of them with a planted failure) and 3 without.</p>
      <div class="row"><button class="primary" id="demo">Load the demo into this server</button><span id="demo-status" role="status" class="muted"></span></div></div>`;
  $("#demo").addEventListener("click", async () => {
    const b = $("#demo");
    b.disabled = true;
    $("#demo-status").textContent = "Sending the demo's traces…";
    try {
      const r = await api("/api/v1/ui/demo", {});
      $("#demo-status").textContent = `Sent ${r.sent} traces of run ${r.run_id}; they are evaluated once they settle.`;
      for (let k = 0; k < 120; k++) {
        const ov = await api("/api/v1/ui/overview");
        if (ov.evaluated >= r.sent) break;
        await new Promise((res) => setTimeout(res, 500));
      }
      go("dashboard", {run_id: r.run_id});
    } catch (e) { $("#demo-status").textContent = "Could not load the demo: " + e.message; b.disabled = false; }
  });
}
