"""The lake's tables and views beyond the span tables: what settling and evaluation write, and every
other table of the single-file store, so the same statements read the same names on both backends.

A lake table has no key and DuckLake decides concurrent commits per table: appends from several
processes never conflict, while two that delete from (or update) one table do, and the later one
is rolled back. So what changes per trace is appended, never updated in place:

- ``trace_settles``: a row each time a trace is assembled (its query, answer, user scope, the count
  it saw, ``settle_id``); the last one (highest ``rowid``, DuckLake's row lineage) is current;
- ``derived_documents``: the context documents an assembly derived, with its ``settle_id``: only
  those of the current assembly are in ``step_documents``;
- ``trace_evals``: a row each time a trace is evaluated (``generation``, the count evaluated), its
  evaluated span count recorded by the cheap tier, or it is queued again (``event``);
- ``evaluation_rows``: every verdict ever written. ``evaluations`` holds those of the latest
  generation of each (trace, evaluator), ``evaluation_history`` the earlier ones: what the single
  file moves to history at each write;
- ``step_fills``: the query, input and output text a step took from its GenAI content events (or
  other log records) at a settle, the type they showed a step of none to be (a span that recorded
  nothing whose log record lists documents is a retrieval), and where they came from (the file
  updates ``steps``): the last
  fill of a step is what ``steps`` shows;
- ``document_texts``: the registry's text of a document sent without one (at its trace's settle,
  or when a knowledge-base load brings it; the file updates ``step_documents``): ``step_documents``
  shows it in place of the empty text;
- ``trace_content_events``: each GenAI content event sent as a log record (trace, record id, when
  received): ``traces.content_events`` counts them, and they move ``traces.last_received_at``, as
  the file's ingest does.

Log records and metric points are plain tables with the file's columns (``log_records``,
``metric_points``): ``ingest.Ingest.write_signals`` appends them.

The views ``traces``, ``step_documents``, ``evaluations`` and ``evaluation_history`` have the
columns of the single-file store's tables, in the same order (read from its migrations), and so do
the plain tables made for the rest (``eval_log``, ``feedback``, ``gold_cases``, ...). The views of
the migrations (``eval_status``, ``trace_feedback``) and of the bundled queries (``attribution``,
...) are made on top, as on the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache

import duckdb

from collector.model import DOCUMENT, VERDICT
from collector.store.lake import ddl
from collector.store.schema import migrate
from collector.store.tx import rollback

# the raw tables of ``tables`` and the views over them that this module builds on
SPAN_TABLES = ("spans", "steps", "step_documents")
# the single-file tables that are views on the lake (over the raw tables below)
VIEW_TABLES = ("spans", "steps", "step_documents", "traces", "evaluations", "evaluation_history")
SKIP_TABLES = ("schema_migrations",)

SETTLE_COLUMNS = (
    ("trace_id", "VARCHAR NOT NULL"), ("settle_id", "VARCHAR NOT NULL"), ("query_text", "VARCHAR"),
    ("query_norm", "VARCHAR"), ("answer_text", "VARCHAR"), ("answer_span_id", "VARCHAR"),
    ("user_scope", "VARCHAR[]"), ("assembled_spans", "BIGINT"), ("settled_at", "TIMESTAMP"),
)  # fmt: skip
EVAL_STATE_COLUMNS = (
    ("trace_id", "VARCHAR NOT NULL"), ("event", "VARCHAR NOT NULL"), ("generation", "INTEGER"),
    ("evaluated_at", "TIMESTAMP"), ("evaluated_spans", "BIGINT"),
)  # fmt: skip
FILL_COLUMNS = (
    ("trace_id", "VARCHAR NOT NULL"), ("span_id", "VARCHAR NOT NULL"), ("query_text", "VARCHAR"),
    ("input_text", "VARCHAR"), ("output_text", "VARCHAR"), ("settle_id", "VARCHAR NOT NULL"),
    ("provenance", "VARCHAR"), ("step_type", "VARCHAR"),
)  # fmt: skip
TEXT_COLUMNS = (
    ("trace_id", "VARCHAR NOT NULL"), ("span_id", "VARCHAR NOT NULL"), ("stage", "VARCHAR NOT NULL"),
    ("position", "INTEGER NOT NULL"), ("doc_id", "VARCHAR"), ("content", "VARCHAR"),
    ("content_source", "VARCHAR"), ("filled_at", "TIMESTAMP"),
)  # fmt: skip
CONTENT_EVENT_COLUMNS = (
    ("trace_id", "VARCHAR NOT NULL"), ("record_id", "VARCHAR NOT NULL"), ("received_at", "TIMESTAMP"),
)  # fmt: skip
# the lake's append-only state tables (ZSTD Parquet, like the raw span tables: tables._compress)
STATE_TABLES = (
    "trace_settles", "derived_documents", "trace_evals", "evaluation_rows", "step_fills", "document_texts",
    "trace_content_events",
)  # fmt: skip
SIGNAL_TABLES = ("log_records", "metric_points")

# the latest row of each key of an appended table (DuckLake's row lineage: a later commit, a higher rowid)
_STEP_FILL = "SELECT * FROM step_fills QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY rowid DESC) = 1"
_DOC_TEXT = (
    "SELECT * FROM document_texts "
    "QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, stage, position ORDER BY rowid) = 1"
)
_CONTENT_EVENTS = (
    "SELECT trace_id, count(DISTINCT record_id) AS n, max(received_at) AS received_at "
    "FROM trace_content_events GROUP BY trace_id"
)

# per trace: its current assembly and its evaluation state
_TRACE_STATE = """
WITH s AS (SELECT * FROM trace_settles QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY rowid DESC) = 1),
e AS (SELECT trace_id, max(generation) AS eval_generation,
             max(evaluated_at) FILTER (WHERE generation IS NOT NULL) AS evaluated_at,
             min(evaluated_at) FILTER (WHERE generation IS NOT NULL) AS verdicts_since,
             max({'r': rowid, 'v': evaluated_spans}).v AS evaluated_spans
      FROM trace_evals GROUP BY trace_id)
SELECT coalesce(s.trace_id, e.trace_id) AS trace_id, s.settle_id, s.query_text, s.query_norm, s.answer_text,
       s.answer_span_id, s.user_scope, s.assembled_spans, s.settled_at,
       coalesce(e.eval_generation, 0) AS eval_generation, e.evaluated_at, e.verdicts_since, e.evaluated_spans
FROM s FULL JOIN e ON s.trace_id = e.trace_id"""


@cache
def file_schema() -> tuple[dict[str, list[tuple[str, str]]], dict[str, str]]:
    """The single-file store's tables ((column, type) in order) and its migrations' views (name ->
    SELECT), from its migrations run on an empty in-memory database."""
    con = duckdb.connect(":memory:")
    try:
        migrate(con)
        tables: dict[str, list[tuple[str, str]]] = {}
        for (table,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall():
            tables[str(table)] = [
                (str(c), str(t))
                for c, t in con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                    "ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            ]
        views = {
            str(name): _select_of(str(text))
            for name, text in con.execute(
                "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
            ).fetchall()
        }
        return tables, views
    finally:
        con.close()


def _select_of(create_view: str) -> str:
    """``CREATE VIEW name AS SELECT …;`` -> ``SELECT …``."""
    head, sep, body = create_view.partition(" AS ")
    if not sep:
        raise ValueError(f"not a view definition: {create_view[:60]}")
    return body.strip().rstrip(";")


def _columns(table: str) -> list[tuple[str, str]]:
    return file_schema()[0][table]


def _select_list(table: str, sources: Mapping[str, str]) -> str:
    """The select list giving ``table``'s columns in order: each from ``sources`` (column -> SQL) or
    NULL of its type."""
    out = []
    for column, type_ in _columns(table):
        expr = sources.get(column)
        out.append(f"{expr} AS {column}" if expr else f"CAST(NULL AS {type_}) AS {column}")
    return ", ".join(out)


def views(span_views: Mapping[str, str]) -> dict[str, str]:
    """Every view of the lake, in creation order, given ``tables``' one-row-per-span views (name ->
    SELECT): those of ``spans`` and ``steps`` keep their names, the span documents and the span
    summary of each trace are the base of ``step_documents`` and ``traces``."""
    out = {"spans": span_views["spans"]}
    filled = ", ".join(
        f"CASE WHEN f.trace_id IS NULL THEN s.{c} ELSE f.{c} END AS {c}"
        for c in ("query_text", "input_text", "output_text")
    )
    # the type the records showed a step of no type to be
    filled += ", CASE WHEN f.step_type IS NULL THEN s.step_type ELSE f.step_type END AS step_type"
    # where the filled fields came from, over the provenance the step was stored with
    filled += (
        ", CASE WHEN f.provenance IS NULL THEN s.provenance "
        "ELSE json_merge_patch(coalesce(s.provenance, '{}'), f.provenance) END AS provenance"
    )
    out["steps"] = (
        f"SELECT s.* REPLACE ({filled}) FROM ({span_views['steps']}) s "
        f"LEFT JOIN ({_STEP_FILL}) f ON f.trace_id = s.trace_id AND f.span_id = s.span_id"
    )
    textless = "(d.content IS NULL OR d.content = '') AND x.trace_id IS NOT NULL"
    out["span_documents"] = (
        f"SELECT d.* REPLACE (CASE WHEN {textless} THEN x.content ELSE d.content END AS content, "
        f"CASE WHEN {textless} THEN x.content_source ELSE d.content_source END AS content_source) "
        f"FROM ({span_views['step_documents']}) d LEFT JOIN ({_DOC_TEXT}) x ON x.trace_id = d.trace_id "
        "AND x.span_id = d.span_id AND x.stage = d.stage AND x.position = d.position AND d.source = 'span'"
    )
    out["trace_spans"] = span_views["traces"]
    out["trace_state"] = _TRACE_STATE
    doc_cols = ", ".join(DOCUMENT.names)
    out["step_documents"] = (
        f"SELECT {doc_cols} FROM span_documents UNION ALL SELECT {doc_cols} FROM derived_documents d "
        "WHERE (d.trace_id, d.settle_id) IN (SELECT trace_id, settle_id FROM trace_state)"
    )
    sources = {c: f"t.{c}" for c in TRACE_SPAN_COLUMNS}
    sources.update({c: f"st.{c}" for c in STATE_OF_TRACE})
    sources["eval_generation"] = "coalesce(st.eval_generation, 0)"  # (the file's default, also unsettled)
    # content events re-open a trace as a late span does (the file's ingest counts them in ``traces``)
    sources["content_events"] = "coalesce(ce.n, 0)"
    sources["last_received_at"] = "greatest(t.last_received_at, ce.received_at)"
    out["traces"] = (
        f"SELECT {_select_list('traces', sources)} FROM trace_spans t LEFT JOIN trace_state st "
        f"ON st.trace_id = t.trace_id LEFT JOIN ({_CONTENT_EVENTS}) ce ON ce.trace_id = t.trace_id"
    )
    eval_cols = ", ".join(VERDICT.names)
    latest = "max(generation) OVER (PARTITION BY trace_id, evaluator)"
    out["evaluations"] = f"SELECT {eval_cols} FROM evaluation_rows QUALIFY generation = {latest}"
    out["evaluation_history"] = f"SELECT {eval_cols} FROM evaluation_rows QUALIFY generation < {latest}"
    out.update(file_schema()[1])  # eval_status, trace_feedback
    return out


# the columns of ``traces`` summed up from its spans (``tables``' ``traces`` view, here ``trace_spans``)
TRACE_SPAN_COLUMNS = (
    "trace_id", "first_received_at", "last_received_at", "span_count", "error_count", "has_root",
    "root_span_id", "root_name", "start_time", "end_time", "service_name", "case_id", "run_id",
    "session_id", "user_id",
)  # fmt: skip
# the columns of ``traces`` that come from ``trace_state`` (the rest from the spans, or NULL)
STATE_OF_TRACE = (
    "query_text", "answer_text", "answer_span_id", "user_scope", "settled_at", "assembled_spans",
    "query_norm", "eval_generation", "evaluated_at", "evaluated_spans", "verdicts_since",
)  # fmt: skip


def tables() -> dict[str, str]:
    """The lake's own tables beyond ``tables``' raw span tables: name -> column definitions."""
    out: dict[str, str] = {}
    for table, columns in file_schema()[0].items():
        if table in VIEW_TABLES or table in SKIP_TABLES:
            continue
        out[table] = ", ".join(f"{c} {t}" for c, t in columns)
    # every verdict ever written, and the documents of each assembly: the columns of their one
    # definition (``collector.model``), without NOT NULL as the file's migrations made them here before
    out["evaluation_rows"] = VERDICT.definitions(constraints=False)
    out["trace_settles"] = ", ".join(f"{c} {t}" for c, t in SETTLE_COLUMNS)
    out["trace_evals"] = ", ".join(f"{c} {t}" for c, t in EVAL_STATE_COLUMNS)
    out["derived_documents"] = DOCUMENT.definitions(constraints=False) + ", settle_id VARCHAR NOT NULL"
    out["step_fills"] = ", ".join(f"{c} {t}" for c, t in FILL_COLUMNS)
    out["document_texts"] = ", ".join(f"{c} {t}" for c, t in TEXT_COLUMNS)
    out["trace_content_events"] = ", ".join(f"{c} {t}" for c, t in CONTENT_EVENT_COLUMNS)
    return out


def _column_parts(cols: str) -> list[str]:
    """The column definitions of ``tables()``'s comma-separated text, split at the commas outside
    parentheses (a ``STRUCT(a VARCHAR, b VARCHAR)[]`` column is one definition)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(cols):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cols[start:i].strip())
            start = i + 1
    parts.append(cols[start:].strip())
    return [p for p in parts if p]


def create(con: duckdb.DuckDBPyConnection, span_views: Mapping[str, str]) -> None:
    """Make what is missing: the tables, a later migration's columns, then the views (a view of an
    earlier layout, without the columns of the file's table, is made again). Each group is one
    transaction: every DDL statement on a lake is a commit to its catalog (~50 ms each)."""
    have_tables = {
        str(r[0])
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()
    }
    statements = []
    for table, cols in tables().items():
        if table not in have_tables:
            statements.append(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")
            continue
        have = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
        for part in _column_parts(cols):
            name, _, type_ = part.partition(" ")
            if name not in have:
                statements.append(
                    f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {type_.replace(' NOT NULL', '')}"
                )
    _in_one(con, statements)
    existing = {
        str(r[0]): str(r[1])
        for r in con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE database_name = current_database()"
        ).fetchall()
    }
    _in_one(
        con,
        [
            f"CREATE OR REPLACE VIEW {name} AS {select}"
            for name, select in views(span_views).items()
            if name not in existing or _outdated(con, name) or _reads_less(existing[name], select)
        ],
    )
    from collector.store.lake.claims import view_sql
    from collector.store.views import create_views

    def bundled() -> None:  # the bundled views, the lake's own ``trace_claims`` in place of the file's
        create_views(con)
        con.execute(f"CREATE OR REPLACE VIEW trace_claims AS {view_sql()}")

    _retrying(con, lambda: _in_transaction(con, bundled))


def _in_one(con: duckdb.DuckDBPyConnection, statements: list[str]) -> None:
    """``statements`` in one transaction, tried again when another collector commits first."""
    if statements:
        _retrying(con, lambda: _in_transaction(con, lambda: [con.execute(s) for s in statements]))


def _in_transaction(con: duckdb.DuckDBPyConnection, run: Callable[[], object]) -> None:
    con.execute("BEGIN")
    try:
        run()
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def _outdated(con: duckdb.DuckDBPyConnection, view: str) -> bool:
    """A view of a file table whose columns differ from the file's (an earlier lake layout)."""
    if view not in file_schema()[0]:
        return False
    have = [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]
    return have != [c for c, _ in _columns(view)]


def _reads_less(made: str, select: str) -> bool:
    """A view made before a lake table it now reads existed (an earlier layout): its definition
    ``made`` names none of the lake's own tables that ``select`` names."""
    own = [t for t in STATE_TABLES if re.search(rf"\b{t}\b", select)]
    return any(not re.search(rf"\b{t}\b", made) for t in own)


def _retrying(con: duckdb.DuckDBPyConnection, run: Callable[[], object]) -> None:
    """``run`` again when another collector commits the same DDL first (``ddl``)."""
    ddl.idempotent(run, what="the lake's tables and views")
