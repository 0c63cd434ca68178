// LangChain.js answering the framework scenario's questions against the local chat server, traced by
// OpenInference's LangChain.js instrumentation (the instrumentor LangChain.js users are pointed to for
// OpenTelemetry), exported by the real OTLP/HTTP exporter. The scenario (knowledge base, questions,
// TOP_K, BUDGET) comes from the test as JSON in RAGFAULT_TEST_SCENARIO; the app prints one line: the
// trace id of each question.
//
// The knowledge base sits behind a LangChain retriever (a BaseRetriever ranking by shared words, ties
// in knowledge-base order) that returns TOP_K documents with their ids and scores.
//
// Modes (argv[2]):
//   chain   an LCEL chain: {context: retriever | first BUDGET documents, question} | chat prompt |
//           ChatOpenAI | string parser.
//   agent   a runnable of the app's own that binds a search tool to ChatOpenAI: the model calls the
//           tool, the tool runs the retriever and hands the model the first BUDGET documents as JSON,
//           a second model call answers.
//   chain-ids / agent-ids  the same with the documents' ids in LangChain's Document.id only (not in
//           their metadata).
// OpenInference's documented OPENINFERENCE_HIDE_* variables (set by the test) turn content off.

import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { Document } from "@langchain/core/documents";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { BaseRetriever } from "@langchain/core/retrievers";
import { RunnableLambda, RunnablePassthrough, RunnableSequence } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";

import { askAll, modeOr, scenario, tracerProvider } from "./harness.mjs";

const mode = modeOr("chain");
const provider = tracerProvider(`langchain-js-${mode}`);
// LangChain.js is instrumented by hand through its callback manager, as the instrumentation's docs say;
// the trace config must be given (even empty) for the OPENINFERENCE_HIDE_* variables to be read
new LangChainInstrumentation({ tracerProvider: provider, traceConfig: {} }).manuallyInstrument(CallbackManagerModule);

const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "how", "what", "when", "does", "do"]);
const words = (text) => (text.toLowerCase().match(/\w+/g) ?? []).filter((w) => w.length > 2 && !STOP.has(w));

// the documents' ids: LangChain's Document.id, and in the metadata where the instrumentation records it
// (under doc_id, as ragfault's docs ask; the `ids` mode leaves the metadata without it)
const meta = (id) => (mode.endsWith("ids") ? {} : { doc_id: id });

class KeywordRetriever extends BaseRetriever {
  lc_namespace = ["ragfault", "test", "retrievers"];

  constructor(fields) {
    super(fields);
    this.k = fields.k;
  }

  async _getRelevantDocuments(query) {
    const q = new Set(words(query));
    return scenario.KB.map((d, i) => ({ d, i, score: words(d.content).filter((w) => q.has(w)).length }))
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, this.k)
      .map(({ d, score }) => new Document({ id: d.doc_id, pageContent: d.content, metadata: { ...meta(d.doc_id), score } }));
  }
}

const retriever = new KeywordRetriever({ k: scenario.TOP_K });
const llm = new ChatOpenAI({
  model: "local-model",
  apiKey: "local",
  temperature: 0,
  maxRetries: 0,
  configuration: { baseURL: process.env.RAGFAULT_TEST_CHAT_URL },
});
const SYSTEM = "Answer from the context only.";

// the prompt budget: the model sees the first BUDGET documents only
const budget = (docs) => docs.slice(0, scenario.BUDGET).map((d) => `- ${d.pageContent}`).join("\n");

const chain = RunnableSequence.from([
  { context: retriever.pipe(budget), question: new RunnablePassthrough() },
  ChatPromptTemplate.fromMessages([
    ["system", SYSTEM],
    ["human", "Context:\n{context}\nQuestion: {question}"],
  ]),
  llm,
  new StringOutputParser(),
]).withConfig({ runName: "support-answer" });

const search = tool(
  async ({ query }, config) => {
    const docs = await retriever.invoke(query, config);
    return JSON.stringify(docs.slice(0, scenario.BUDGET).map((d) => ({ id: d.id, content: d.pageContent })));
  },
  {
    name: "search",
    description: "Search the knowledge base.",
    schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  },
);

// the runnable's config is handed on to the calls inside it, so that they trace as its children
const agent = RunnableLambda.from(async (question, config) => {
  const messages = [new SystemMessage(SYSTEM), new HumanMessage(question)];
  const choice = await llm.bindTools([search]).invoke(messages, config);
  messages.push(choice);
  for (const call of choice.tool_calls ?? []) messages.push(await search.invoke(call, config));
  const answer = await llm.invoke(messages, config);
  return answer.content;
}).withConfig({ runName: "support-agent" });

await askAll(provider, (question) => (mode.startsWith("agent") ? agent : chain).invoke(question), awaitAllCallbacks);
