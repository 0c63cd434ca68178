// What every TypeScript framework app shares: the scenario the test gives as JSON in
// RAGFAULT_TEST_SCENARIO, the mode (argv[2]), a tracer provider exporting to RAGFAULT_TEST_OTLP with the
// real OTLP/HTTP exporter (async context on, so spans nest across awaits), and `askAll`, which runs
// each question, records the trace id of the first span it started, exports, and prints the ids as
// the app's last line (what the test reads).

import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

export const scenario = JSON.parse(process.env.RAGFAULT_TEST_SCENARIO);

export function modeOr(fallback) {
  return process.argv[2] ?? fallback;
}

// which trace each question produced: the first span started while it runs
const ids = {};
let current = null;
const recorder = {
  onStart(span) {
    if (current !== null && !(current in ids)) ids[current] = span.spanContext().traceId;
  },
  onEnd() {},
  forceFlush: async () => {},
  shutdown: async () => {},
};

export function tracerProvider(service) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [recorder, new SimpleSpanProcessor(new OTLPTraceExporter({ url: process.env.RAGFAULT_TEST_OTLP }))],
  });
  trace.setGlobalTracerProvider(provider);
  return provider;
}

// ask(question) for each of the scenario's questions in turn; `settle` runs before the export (a
// framework's callbacks still pending)
export async function askAll(provider, ask, settle = async () => {}) {
  for (const [key, question] of Object.entries(scenario.QUESTIONS)) {
    current = key;
    await ask(question);
    current = null;
  }
  await settle();
  await provider.forceFlush();
  await provider.shutdown();
  process.stdout.write(JSON.stringify(ids) + "\n");
}
