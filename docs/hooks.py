#!/usr/bin/env python
"""MkDocs hooks of the site: the SQL reference page is written when the site is built, from every
bundled query's header and the catalog of a new store (DuckDB's own ``information_schema``).

The headers and the schema are the source of truth (with what each column of a span, a step, a
document and a verdict means from their one definition, ``collector.model``), so the page is made from them rather than
written by hand: a query, table or column added is on the page at the next build, and nothing in
the repository can go stale. A table or view without a line in ``PURPOSE`` fails the build: a new
one needs a sentence for its readers. ``tests/test_docs.py`` builds the site and checks every
query, table and view is on the page.

``python docs/hooks.py`` prints the page (run from the project root).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = "sql-reference.md"
# a parameter declaration of a query header: ``$name TYPE [= default]``, a default may be a quoted
# string holding commas
_PARAM = re.compile(r"\$([A-Za-z_]\w*)\s+([A-Za-z_][\w\[\]]*)(?:\s*=\s*('(?:[^']|'')*'|[^,]+))?")

# What each table and view holds, for a reader who has not seen the code.
PURPOSE = {
    "spans": "every span as sent, losslessly: attributes, events, links, resource, scope, status, "
    "plus the service, session, user, case and run ids read from it, and `feedback` (whether its "
    "attribute keys or event names look like annotations or evaluations). Ids are lowercase hex.",
    "steps": "one row per span, as a convention reader understood it: `step_type` (retrieval, rerank, "
    "llm, tool, agent, chain, embedding, other), query, input and output text, model, tokens, the tool "
    "call, `top_k`, `data_source_id`, which reader produced it (`convention`), and `provenance`: a JSON "
    "object naming, for each field, the reader or rule that produced it (`genai`, "
    "`shape:documents@search.output`, `shape:text@event[llm.prompt].content`, `mapping:<name>@<key>`, "
    "`ragfault`).",
    "step_documents": "the documents of each step by `stage`: candidate, rerank_input, reranked, "
    "context, surfaced, opened; position, ids, content, score, metadata; `source` span or derived; "
    "`content_source` registry when the text came from `kb_documents`.",
    "traces": "one row per trace: its query and answer, the answering span, and the settle and "
    "evaluation state (`assembled_spans`, `eval_generation`, …); `content_events` counts GenAI content "
    "log records stored after its first span.",
    "log_records": "every OTLP log record, losslessly, one row a record, joined to its span by trace "
    "and span id; `record_id` is a hash of what was sent.",
    "metric_points": "every OTLP metric data point, one row a point (gauges and sums in `value`, "
    "histograms in `count`, `sum`, `bucket_counts`, …); `point_id` is a hash of what was sent.",
    "gold_cases": "the loaded gold cases ([Gold cases](gold-cases.md)), with the `dataset` (file) they "
    "came from.",
    "gold_promotions": "where each gold case promoted from a live trace came from: the trace, the cause "
    "live attribution suggested and the one the reviewer confirmed, who promoted it and when "
    "([Triage](live.md#triage-from-a-live-failure-to-a-gold-case)).",
    "kb_documents": "the knowledge-base registry ([Gold cases](gold-cases.md#knowledge-base-document-fields)).",
    "kb_changes": "each knowledge-base load's changed documents (content, version or validity), read "
    "by `kb_affected`.",
    "evaluations": "the verdicts of the latest evaluation of each trace: one row per metric, with "
    "value, numerator, denominator, status, reason, `passed`, label and details.",
    "evaluation_history": "earlier verdicts, moved here when a trace is evaluated again (by `generation`).",
    "eval_log": "every evaluation decision per trace and tier: evaluated, sampled out, filtered, over "
    "budget, with the reason.",
    "feedback": "user feedback: from `POST /api/v1/feedback` and from annotations on spans.",
    "judge_cache": "the judge's answers, cached by input, context hash, model and prompt version.",
    "judge_calls": "every call to the judge's endpoint, with tokens, cost and outcome.",
    "judge_verdicts": "the judge's label of each item it scored, for review and calibration.",
    "judge_versions": "each judge version (model and prompt) seen, and whether it is trusted.",
    "human_labels": "labels people gave judge items (`POST /api/v1/labels`, `ragfault label import`).",
    "marked_runs": "run marks set through `PUT /api/v1/runs/{run_id}` (the view `run_marks` adds the "
    "traces' own).",
    "schema_migrations": "the migrations applied to this file.",
    "attribution": "root cause and failing layers of every evaluated trace with a gold case (the "
    "bundled query [`attribution`](#attribution)).",
    "run_marks": "each run's group of repeats and closed-book twin (the bundled query [`run_marks`](#run_marks)).",
    "live_attribution": "root cause and failing layers of every evaluated trace without a gold case, "
    "from what the trace and the registry prove; `none_seen`, never `ok`, when nothing failed (the "
    "bundled query [`live_attribution`](#live_attribution)).",
    "trace_health": "the reference-free signals of every settled trace: retrievals, candidates and their "
    "top score, stale or forbidden context, claims and unsupported ones, refusal, latency, tokens (the "
    "bundled query [`trace_health`](#trace_health); `online_health` adds them up by hour and service).",
    "trace_coverage": "what each settled trace carries that attribution needs (question, case id, scopes, "
    "retrieval, candidates' ids and text, rerank, the answering call's input, context, answer, citations, "
    "model, tokens), from its own rows (the bundled query [`trace_coverage`](#trace_coverage); `coverage` "
    "adds them up per service and convention and looks the registry up).",
    "case_verdicts": "the verdicts of each gold-case trace that the gold-set reports read (answerability, "
    "recall@k, candidate and context recall, context retention, fact coverage, answer support, citation "
    "validity), a row a verdict (the bundled query [`case_verdicts`](#case_verdicts); `case_results`, "
    "`layer_metrics` and `refusal_table` read it rather than every verdict).",
    "attribution_facts": "on a single file, the rows `attribution` computes from each gold-case trace's "
    "verdicts, kept once computed (the view reads them, and computes those of the traces in `facts_changed`).",
    "live_attribution_facts": "on a single file, the rows `live_attribution` computes from each live "
    "trace's verdicts, kept once computed (the view reads them, and computes those in `facts_changed`).",
    "trace_health_facts": "on a single file, the rows `trace_health` computes for each trace, kept once "
    "computed (the view reads them, and computes those in `facts_changed`).",
    "trace_coverage_facts": "on a single file, the rows `trace_coverage` computes for each trace, kept "
    "once computed (the view reads them, and computes those in `facts_changed`).",
    "case_verdicts_facts": "on a single file, the rows `case_verdicts` selects for each gold-case trace, "
    "kept once computed (the view reads them, and computes those in `facts_changed`).",
    "facts_pending": "on a single file, the facts tables still to be computed in full (after a migration).",
    "facts_changed": "on a single file, the traces whose verdicts or assembly a write changed: the facts "
    "views compute their rows when read, until a write flushes them (2,000 traces, or five minutes).",
    "trace_feedback": "feedback summed per trace: counts, thumbs, mean score, comments.",
    "eval_status": "the latest evaluation decision per trace and tier: why a trace has no score.",
    "trace_claims": "who settles, evaluates or judges a trace now on a DuckLake store: the collector, since "
    "and until when, whether it is alive, whom the claim was taken over from (the bundled query "
    "[`trace_claims`](#trace_claims)); empty on a single file.",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def _header(sql: str, key: str) -> str:
    """One header line's value (``-- key: value``), with its continuation lines."""
    lines = sql.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"-- {key}:"):
            value = [line.split(":", 1)[1].strip()]
            for more in lines[i + 1 :]:
                if not more.startswith("--   "):
                    break
                value.append(more[2:].strip())
            return " ".join(value)
    return ""


def _queries() -> list[str]:
    from queries import all_queries

    out = [
        "## Bundled queries",
        "",
        "Each runs by name (`ragfault query NAME -p name=value`), from the web UI's SQL page, or pasted "
        "into `POST /api/v1/sql`; the files are `queries/NAME.sql`. A parameter without a default is "
        "required; `NULL` means all.",
        "",
    ]
    for name, q in sorted(all_queries().items()):
        out += [f"### `{name}`", ""]
        if q.view:
            out += [f"Also installed as the view `{q.view}`.", ""]
        out += [_cell(q.description), ""]
        if q.grain:
            out += [f"**Grain:** {q.grain}", ""]
        declared = _PARAM.findall(_header(q.sql, "params"))
        if declared:
            out += ["| parameter | type | default |", "|---|---|---|"]
            for p, typ, default in declared:
                out.append(f"| `${p}` | {typ} | {f'`{default.strip()}`' if default else 'required'} |")
            out.append("")
        else:
            out += ["**Parameters:** none", ""]
        if q.returns:
            out += [f"**Returns:** {q.returns}", ""]
    return out


def _meanings() -> dict[str, dict[str, str]]:
    """What each column of the tables defined once (``collector.model``) means: the span, step,
    document and verdict tables, and the verdicts' history, which has the verdicts' columns."""
    from collector.model import TABLES, VERDICT, VERDICT_HISTORY

    out = {t.name: {c.name: c.doc for c in t.columns} for t in TABLES}
    out[VERDICT_HISTORY] = out[VERDICT.name]
    return out


def _catalog() -> list[str]:
    from collector.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "schema.duckdb")
        try:
            cur = store.cursor()
            kinds = cur.execute(
                "SELECT table_name, table_type FROM information_schema.tables ORDER BY table_name"
            ).fetchall()
            columns = cur.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "ORDER BY table_name, ordinal_position"
            ).fetchall()
        finally:
            store.close()
    missing = [name for name, _ in kinds if name not in PURPOSE]
    if missing:
        raise SystemExit(f"no PURPOSE line for {missing}: describe each in {Path(__file__).name}")
    meanings = _meanings()
    by_table: dict[str, list[tuple[str, str]]] = {}
    for table, column, typ in columns:
        by_table.setdefault(table, []).append((column, typ))
    out: list[str] = []
    for title, kind, prefix in (("Views", "VIEW", "view"), ("Tables", "BASE TABLE", "table")):
        out += [f"## {title}", ""]
        for name, k in kinds:
            if k != kind:
                continue
            out += [f"### {prefix} `{name}`", "", PURPOSE[name], ""]
            meaning = meanings.get(name)
            if meaning is None:
                out += ["| column | type |", "|---|---|"]
                out += [f"| `{c}` | {typ} |" for c, typ in by_table[name]]
            else:
                out += ["| column | type | meaning |", "|---|---|---|"]
                out += [f"| `{c}` | {typ} | {_cell(meaning.get(c, ''))} |" for c, typ in by_table[name]]
            out.append("")
    return out


def render() -> str:
    """The page, as this code and a new store have it."""
    head = [
        "# SQL reference",
        "",
        "Every bundled query, view and table of the single-file store, with their columns. A DuckLake "
        "store shows the same names with the same columns ([Scale-out](scale-out.md)). How to run SQL, "
        "and what the sandbox refuses: [Query the attribution](queries.md).",
        "",
    ]
    return "\n".join(head + _queries() + _catalog()).rstrip() + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs hook: the SQL reference page's text is rendered now; every other page is left alone."""
    return render() if page.file.src_uri == PAGE else markdown


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.stdout.write(render())
