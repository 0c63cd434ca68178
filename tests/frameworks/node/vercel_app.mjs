// The Vercel AI SDK answering the framework scenario's questions against the local chat server, with
// the SDK's own OpenTelemetry telemetry (experimental_telemetry), exported by the real OTLP/HTTP
// exporter. The scenario (knowledge base, questions, TOP_K, BUDGET) comes from the test as JSON in
// RAGFAULT_TEST_SCENARIO; the app prints one line: the trace id of each question.
//
// Modes (argv[2]):
//   generate  generateText with a search tool: the tool returns the TOP_K best documents (its
//             result), and its toModelOutput keeps the first BUDGET of them for the model (the
//             prompt budget); a second step answers from them.
//   stream    the same with streamText.
//   manual    a hand-written retrieval span (GenAI semantic conventions) under a root span of the
//             app, then generateText with the budgeted documents in the prompt, no tools.

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

import { askAll, modeOr, scenario, tracerProvider } from "./harness.mjs";

const mode = modeOr("generate");
const provider = tracerProvider(`vercel-ai-${mode}`);
const tracer = provider.getTracer("vercel-ai-app");

const local = createOpenAICompatible({
  name: "local",
  baseURL: process.env.RAGFAULT_TEST_CHAT_URL,
  apiKey: "local",
  includeUsage: true, // streamed responses carry usage too
});
const model = local("local-model");
const telemetry = { isEnabled: true, tracer, functionId: "support-answer" };

const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "how", "what", "when", "does", "do"]);
const words = (text) => (text.toLowerCase().match(/\w+/g) ?? []).filter((w) => w.length > 2 && !STOP.has(w));

// keyword retrieval as the Python apps do it: shared words, ties in knowledge-base order
function rank(query, k) {
  const q = new Set(words(query));
  return scenario.KB.map((d, i) => ({ d, i, score: words(d.content).filter((w) => q.has(w)).length }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .map(({ d, score }) => ({ id: d.doc_id, content: d.content, score }));
}

const search = tool({
  description: "Search the knowledge base.",
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => rank(query, scenario.TOP_K),
  // the prompt budget: the model is given the first BUDGET documents only
  toModelOutput: (docs) => ({ type: "json", value: docs.slice(0, scenario.BUDGET) }),
});

async function ask(question) {
  const common = { model, system: "Answer from the context only.", experimental_telemetry: telemetry };
  if (mode === "generate") {
    return (await generateText({ ...common, prompt: question, tools: { search }, stopWhen: stepCountIs(3) })).text;
  }
  if (mode === "stream") {
    const result = streamText({ ...common, prompt: question, tools: { search }, stopWhen: stepCountIs(3) });
    return await result.text;
  }
  // manual: the app's own root span, its own retrieval span, then one model call
  return await tracer.startActiveSpan("answer", { attributes: { "input": question } }, async (root) => {
    const docs = await tracer.startActiveSpan(
      "retrieve",
      { attributes: { "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": question } },
      async (span) => {
        const found = rank(question, scenario.TOP_K);
        span.setAttribute("gen_ai.retrieval.documents", JSON.stringify(found));
        span.end();
        return found;
      },
    );
    const context = docs.slice(0, scenario.BUDGET).map((d) => `- ${d.content}`).join("\n");
    const prompt = `Context:\n${context}\nQuestion: ${question}`;
    const { text } = await generateText({ ...common, prompt });
    root.setAttribute("output", text);
    root.end();
    return text;
  });
}

await askAll(provider, ask);
