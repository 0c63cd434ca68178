"""The stored concepts, each defined once: a span, a step, a step document and a verdict.

Every column a table holds is written here with its Arrow type (what ingest and evaluation build),
its DuckDB type (what the store's DDL says), whether it may be NULL, whether it is stored
ZSTD-compressed, whether ingest writes it, and what it means. The ingest column lists
(``collector.ingest.batch``), the Arrow schemas (``collector.store.schema``), the lake's raw tables
(``collector.store.lake.tables``, ``lake.schema``), the evaluators' verdict schema and the column tables of
docs/sql-reference.md are derived from these tables instead of listing the fields again.

The migrations stay the history they are; ``tests/store/test_model.py`` (a file) and
``tests/store/lake/test_model_columns.py`` (a lake) prove that a store created from scratch has
exactly these columns, in this order, with these types. A new column is a migration plus one line
here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

_S = pa.string()
_TS = pa.timestamp("us")
_STR_LIST = pa.list_(pa.string())


@dataclass(frozen=True, slots=True)
class Column:
    """One stored column. ``duck`` is the type as DuckDB's ``information_schema`` spells it; ``zstd``:
    the migrations store it ZSTD-compressed (long texts and JSON, migrations 020 and 021);
    ``ingest``: the writer appends it from a flattened request (else a later stage fills it)."""

    name: str
    arrow: pa.DataType
    duck: str
    doc: str
    nullable: bool = True
    zstd: bool = False
    ingest: bool = True

    def definition(self, *, constraints: bool = True) -> str:
        """``name TYPE [NOT NULL]`` as a CREATE TABLE column definition (no compression clause: the
        lake's Parquet files are compressed per table, and the file's migrations say their own)."""
        not_null = " NOT NULL" if constraints and not self.nullable else ""
        return f"{self.name} {self.duck}{not_null}"


@dataclass(frozen=True, slots=True)
class Table:
    """A stored table: its columns in storage order and what one row is."""

    name: str
    grain: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Every column, in order."""
        return tuple(c.name for c in self.columns)

    @property
    def ingest_names(self) -> tuple[str, ...]:
        """The columns ingest writes, in order (the row tuples ``collector.ingest.span_rows.flatten`` builds)."""
        return tuple(c.name for c in self.columns if c.ingest)

    def arrow_schema(self, *, ingest_only: bool = False) -> pa.Schema:
        """The Arrow schema of the table's rows (of the columns ingest writes, with ``ingest_only``)."""
        return pa.schema([(c.name, c.arrow) for c in self.columns if c.ingest or not ingest_only])

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    def definitions(self, *, constraints: bool = True) -> str:
        """The column definitions of a CREATE TABLE statement, comma-separated."""
        return ", ".join(c.definition(constraints=constraints) for c in self.columns)


def _id(name: str, doc: str, nullable: bool = False) -> Column:
    return Column(name, _S, "VARCHAR", doc, nullable=nullable)


def _text(name: str, doc: str, *, zstd: bool = False, ingest: bool = True) -> Column:
    return Column(name, _S, "VARCHAR", doc, zstd=zstd, ingest=ingest)


def _json(name: str, doc: str, *, zstd: bool = False) -> Column:
    return Column(name, _S, "JSON", doc, zstd=zstd)


def _time(name: str, doc: str, nullable: bool = True) -> Column:
    return Column(name, _TS, "TIMESTAMP", doc, nullable=nullable)


def _count(name: str, doc: str) -> Column:
    return Column(name, pa.uint32(), "UINTEGER", doc)


def _tokens(name: str, doc: str) -> Column:
    return Column(name, pa.int64(), "BIGINT", doc)


SPAN = Table(
    "spans",
    "one row per span as sent (trace_id, span_id)",
    (
        _id("trace_id", "32 lowercase hex digits, as OTLP/JSON writes them"),
        _id("span_id", "16 lowercase hex digits"),
        _id("parent_span_id", "NULL for a root span", nullable=True),
        _text("trace_state", "W3C trace state as sent"),
        _count("flags", "W3C trace flags"),
        _text("name", "the span's name"),
        _text("kind", "UNSPECIFIED, INTERNAL, SERVER, CLIENT, PRODUCER or CONSUMER"),
        _time("start_time", "UTC; the receive time when dated past the grace period"),
        _time("end_time", "UTC; the receive time when dated past the grace period"),
        Column("start_time_unix_nano", pa.uint64(), "UBIGINT", "the start as sent, lossless"),
        Column("end_time_unix_nano", pa.uint64(), "UBIGINT", "the end as sent, lossless"),
        Column("duration_ms", pa.float64(), "DOUBLE", "end minus start; NULL when either is missing"),
        _text("status_code", "UNSET, OK or ERROR"),
        _text("status_message", "the status description as sent"),
        _json("attributes", "every span attribute, keys as sent", zstd=True),
        _json("events", "span events with their attributes", zstd=True),
        _json("links", "span links with their attributes"),
        _count("dropped_attributes_count", "as sent"),
        _count("dropped_events_count", "as sent"),
        _count("dropped_links_count", "as sent"),
        _json("resource_attributes", "the resource's attributes"),
        _text("resource_schema_url", "as sent"),
        _text("scope_name", "the instrumentation scope (often names the instrumentor)"),
        _text("scope_version", "as sent"),
        _json("scope_attributes", "the scope's attributes"),
        _text("scope_schema_url", "as sent"),
        _text("service_name", "the resource's service.name"),
        _text("session_id", "read by the convention reader"),
        _text("user_id", "read by the convention reader"),
        _text("case_id", "ragfault.case_id: the gold case the request ran"),
        _text("run_id", "ragfault.run_id: the run (suite execution) it belongs to"),
        _text("step_type", "the step the span was read as (see steps)"),
        _text("convention", "the reader that recognised it: openinference, genai, traceloop, ..."),
        _time("received_at", "when the collector received it"),
        Column("feedback", pa.bool_(), "BOOLEAN", "the span carries annotations or evaluation events"),
    ),
)

STEP = Table(
    "steps",
    "one row per span, read as a step of the request (trace_id, span_id)",
    (
        _id("trace_id", "the span's trace"),
        _id("span_id", "the span"),
        _id("parent_span_id", "NULL for a root span", nullable=True),
        _id("step_type", "retrieval, rerank, llm, tool, agent, chain, embedding or other"),
        _text("convention", "the reader that recognised the span"),
        _text("name", "the span's name"),
        _text("service_name", "the resource's service.name"),
        _time("start_time", "UTC"),
        _time("end_time", "UTC"),
        Column("duration_ms", pa.float64(), "DOUBLE", "end minus start"),
        _text("status_code", "UNSET, OK or ERROR"),
        _text("model", "the model an LLM or embedding step called"),
        _tokens("input_tokens", "prompt tokens; NULL when absent or out of range"),
        _tokens("output_tokens", "completion tokens"),
        _tokens("total_tokens", "as reported"),
        _text("query_text", "retrieval or rerank query; for an LLM call the last user message", zstd=True),
        _text("input_text", "everything the step received, as text (an LLM call's whole prompt)", zstd=True),
        _text("output_text", "what the step returned, as text (an LLM call's answer)", zstd=True),
        _text("tool_name", "the tool a tool step called"),
        _text("tool_arguments", "its arguments, as text"),
        _text("tool_result", "its result, as text"),
        Column("top_k", pa.int32(), "INTEGER", "the number of results a retrieval asked for"),
        _text("case_id", "ragfault.case_id"),
        _text("run_id", "ragfault.run_id"),
        _text("session_id", "the conversation"),
        _text("user_id", "the caller"),
        Column("user_scope", _STR_LIST, "VARCHAR[]", "the caller's permission scopes"),
        Column("citations", _STR_LIST, "VARCHAR[]", "the document ids an answer cites"),
        Column("is_root", pa.bool_(), "BOOLEAN", "the span has no parent"),
        _time("received_at", "when the collector received the span"),
        _text("data_source_id", "the knowledge base a retrieval read, when named"),
        _json("provenance", "field -> the reader, rule and key, or mapping entry that produced it"),
        _text(
            "run_group", "ragfault.run_group: the configuration the span's run repeats (a mark sent on it)"
        ),
        _text("baseline_of", "ragfault.baseline_of: the run the span's run is the closed-book twin of"),
    ),
)

DOCUMENT = Table(
    "step_documents",
    "one row per document at one stage of one step (trace_id, span_id, stage, position)",
    (
        _id("trace_id", "the step's trace"),
        _id("span_id", "the step that returned (or, for context, received) the document"),
        _id("stage", "candidate, rerank_input, reranked, context, surfaced or opened"),
        Column("position", pa.int64(), "BIGINT", "0-based rank within the step and stage"),
        _text("doc_id", "source document id (a metadata source key, else the id given)"),
        _text("chunk_id", "the id as the span gave it (often a chunk UUID)"),
        _text("content", "the document's text as sent (or the registry's, when sent without)"),
        Column("score", pa.float64(), "DOUBLE", "the retriever's or reranker's score"),
        _json("metadata", "the document's metadata as sent"),
        _text("source", "span (as sent) or derived (found at settle, e.g. in the LLM input)"),
        _time("received_at", "when the span was received"),
        _text("content_source", "where a text sent without one was filled from", ingest=False),
    ),
)

VERDICT = Table(
    "evaluations",
    "one row per (trace, span, evaluator, metric) of the latest evaluation of a trace",
    (
        _id("trace_id", "the trace evaluated"),
        _id("span_id", "the step a per-step metric is about; NULL for a per-trace metric", nullable=True),
        _text("case_id", "the gold case, when the trace has one"),
        _text("run_id", "the trace's run"),
        _id("evaluator", "the evaluator's name"),
        _id("evaluator_version", "its version"),
        _id("tier", "cheap or judge"),
        _id("metric", "the metric's name (docs/metrics.md)"),
        Column("value", pa.float64(), "DOUBLE", "numerator / denominator, or the score"),
        Column("numerator", pa.float64(), "DOUBLE", "what was found"),
        Column("denominator", pa.float64(), "DOUBLE", "what could be found; 0 makes it not applicable"),
        _id("status", "ok, not_applicable, error or skipped"),
        _text("reason", "why not applicable, or the error"),
        Column("passed", pa.bool_(), "BOOLEAN", "the verdict under the configured policy"),
        _text("label", "a categorical outcome (e.g. answered_unanswerable)"),
        _json("details", "the evidence behind the verdict", zstd=True),
        Column("generation", pa.int32(), "INTEGER", "the trace's evaluation count", nullable=False),
        _time("evaluated_at", "when it was written", nullable=False),
    ),
)


def _score(name: str, doc: str) -> Column:
    return Column(name, pa.float64(), "DOUBLE", doc)


ATTRIBUTION = Table(
    "attribution_facts",
    "one row per evaluated trace with a gold case: what queries/attribution.sql computes from its verdicts",
    (
        _id("trace_id", "the trace"),
        _text("case_id", "its gold case"),
        _text("run_id", "its run"),
        _id("root_cause", "the first failing layer in the attribution order, else ok"),
        Column("failing_layers", _STR_LIST, "VARCHAR[]", "every failing layer, in order", nullable=False),
        _json("evidence", "for each failing layer, the verdict details behind it", zstd=True),
        _score("candidate_recall", "the trace's candidate recall"),
        _score("context_recall", "its context recall"),
        _score("context_retention", "its context retention"),
        _score("answer_support", "its answer support"),
        _score("fact_coverage", "its fact coverage"),
        Column(
            "missing_fields",
            _STR_LIST,
            "VARCHAR[]",
            "what the trace lacks (empty when nothing)",
            nullable=False,
        ),
    ),
)

LIVE_ATTRIBUTION = Table(
    "live_attribution_facts",
    "one row per evaluated trace of live traffic: what queries/live_attribution.sql computes from its verdicts",
    (
        _id("trace_id", "the trace"),
        _text("run_id", "its run"),
        _id("root_cause", "the first failing layer in the attribution order, else none_seen"),
        Column("failing_layers", _STR_LIST, "VARCHAR[]", "every failing layer, in order", nullable=False),
        _json("evidence", "for each failing layer, the verdict details behind it", zstd=True),
        _id("basis", "what the root cause rests on: registry, judge or trace"),
        Column(
            "missing_fields",
            _STR_LIST,
            "VARCHAR[]",
            "what the trace lacks (empty when nothing)",
            nullable=False,
        ),
    ),
)


def _flag(name: str, doc: str, nullable: bool = True) -> Column:
    return Column(name, pa.bool_(), "BOOLEAN", doc, nullable=nullable)


TRACE_HEALTH = Table(
    "trace_health_facts",
    "one row per settled trace: what queries/trace_health.sql computes from its steps, documents and verdicts",
    (
        _id("trace_id", "the trace"),
        _time("start_time", "its start"),
        _flag("gold_verdicts", "a verdict of the trace names a gold case", nullable=False),
        Column("retrieval_calls", pa.int64(), "BIGINT", "its retrieval steps (NULL: none)"),
        _flag("output_recorded", "one of them recorded an output value (text or a tool result)"),
        Column("candidates", pa.int64(), "BIGINT", "its candidate documents (NULL: none)"),
        _score("top_score", "their best score"),
        _flag("stale_in_context", "a stale document reached its context"),
        _flag("forbidden", "a forbidden document reached its context"),
        _score("claims", "the answer's claims"),
        _score("unsupported", "those found unsupported"),
        _score("refused", "1 when it refused, 0 when not"),
        _score("latency_ms", "its latency"),
        _score("tokens", "its tokens"),
        _text("service_name", "its service"),
        _text("case_id", "its gold case"),
        _tokens("error_count", "its spans with an error status"),
    ),
)

_UNTEXTED = pa.list_(pa.struct([("doc_id", _S), ("chunk_id", _S)]))

TRACE_COVERAGE = Table(
    "trace_coverage_facts",
    "one row per settled trace: what queries/trace_coverage.sql computes from its own rows",
    (
        _id("trace_id", "the trace"),
        _time("start_time", "its start"),
        _id("service_name", "its service ('unknown': none)"),
        _id("convention", "the conventions its steps were read with, joined by '+' ('unknown': none)"),
        _flag("query", "it recorded a question", nullable=False),
        _flag("case_id", "it names a gold case", nullable=False),
        _flag("trace_scope", "it carries user scopes", nullable=False),
        _flag("case_scope", "a gold case its verdicts name has scopes", nullable=False),
        _flag("retrieval_step", "it has a retrieval step", nullable=False),
        _flag("rerank_step", "it has a rerank step", nullable=False),
        _flag("llm_step", "it has an LLM step", nullable=False),
        _tokens("candidates", "its candidate documents (0: none)"),
        _flag("candidate_ids", "every candidate has an id", nullable=False),
        _tokens("texted_candidates", "candidates with text of their own"),
        Column(
            "untexted_candidates",
            _UNTEXTED,
            "STRUCT(doc_id VARCHAR, chunk_id VARCHAR)[]",
            "the distinct ids of the other candidates, for the registry's text",
            nullable=False,
        ),
        _flag("rerank_input", "documents went into a rerank step", nullable=False),
        _flag("rerank_output", "documents came out of one", nullable=False),
        _flag("answer_llm_input", "the answering LLM call recorded its input", nullable=False),
        _flag("context", "what the model saw is known", nullable=False),
        _flag("answer", "it recorded an answer", nullable=False),
        _flag("citations", "it cites a document of its own", nullable=False),
        Column(
            "registry_markers",
            _STR_LIST,
            "VARCHAR[]",
            "without such a citation, its answer's other [doc-id] markers, for the registry",
            nullable=False,
        ),
        _flag("model", "an LLM step recorded its model", nullable=False),
        _flag("tokens", "an LLM step recorded tokens", nullable=False),
    ),
)

CASE_VERDICTS = Table(
    "case_verdicts_facts",
    "one row per verdict queries/case_verdicts.sql selects: the gold-set reports' verdicts of a gold-case trace",
    (
        _id("trace_id", "the trace"),
        _id("span_id", "the step a per-step metric is about; NULL for a per-trace metric", nullable=True),
        _text("case_id", "the gold case"),
        _text("run_id", "the trace's run"),
        _id("metric", "the metric's name"),
        _id("status", "ok, not_applicable, error or skipped"),
        _score("value", "numerator / denominator, or the score"),
        _score("numerator", "what was found"),
        _score("denominator", "what could be found"),
        _flag("passed", "the verdict under the configured policy"),
        _text("label", "a categorical outcome"),
    ),
)

TABLES: tuple[Table, ...] = (
    SPAN,
    STEP,
    DOCUMENT,
    VERDICT,
    ATTRIBUTION,
    LIVE_ATTRIBUTION,
    TRACE_HEALTH,
    TRACE_COVERAGE,
    CASE_VERDICTS,
)
"""Every table defined here, in the order the docs list them."""

VERDICT_HISTORY = "evaluation_history"
"""The earlier verdicts: ``VERDICT``'s columns, none of them NOT NULL (migrations 002 and 021)."""
