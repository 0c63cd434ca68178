"""What the web UI reads beyond the bundled queries and the dashboard's facts (``ui_facts``): the case
table and the trace list (paged, sorted from fixed lists), a review screen and a trace's verdicts. Each read runs
through ``reader.run_select`` (one SELECT in a read-only transaction, a row cap); the statements
are ``sql/ui/*.sql``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from collector.store.base import Con
from collector.store.reader import QueryResult, run_select
from collector.store.sqlfiles import sql
from collector.store.templates import filled

# sort keys the tables accept -> the SQL they order by (never spliced from a request)
CASE_SORTS = {
    "root_cause": "_cause_rank",
    "case_id": "case_id",
    "category": "category",
    "run_id": "run_id",
    "start_time": "start_time",
    "context_recall": "context_recall",
    "answer_support": "answer_support",
}
TRACE_SORTS = {"start_time": "t.start_time", "latency_ms": "latency_ms", "service_name": "t.service_name"}

# filters of the trace list -> the condition each adds (only the filters given are in the statement:
# a condition that is always true still costs its scan or its join)
TRACE_FILTERS = {
    "service": "t.service_name = $service",
    "run_id": "t.run_id = $run_id",
    "since": "t.start_time >= CAST($since AS TIMESTAMP)",
    "until": "t.start_time < CAST($until AS TIMESTAMP)",
    # the text as a literal regular expression (``search_pattern``): RE2 matches ignoring case without
    # making a lower-cased copy of every text (what ``lower()`` on each row took: 4 x the read)
    "q": "(regexp_matches(t.query_text, $q_re) OR regexp_matches(t.answer_text, $q_re) OR t.trace_id = lower($q))",
    "feedback": "$feedback = EXISTS (SELECT 1 FROM feedback f WHERE f.trace_id = t.trace_id)",
    "root_cause": "t.trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = $root_cause)",
    # the live page's links: the traces online_health counts (settled, no gold case), those with
    # negative feedback, and those whose live_attribution names a cause
    "live": "$live = (t.settled_at IS NOT NULL AND t.case_id IS NULL AND NOT EXISTS "
    "(SELECT 1 FROM evaluations e WHERE e.trace_id = t.trace_id AND e.case_id IS NOT NULL))",
    "negative_feedback": "$negative_feedback = EXISTS "
    "(SELECT 1 FROM feedback f WHERE f.trace_id = t.trace_id AND f.negative)",
    "live_cause": "t.trace_id IN (SELECT trace_id FROM live_attribution WHERE root_cause = $live_cause)",
}


def order_by(sorts: dict[str, str], sort: str, desc: bool, tiebreak: str, reverse: bool = False) -> str:
    """The ORDER BY list of a sort key of ``sorts`` (KeyError for any other key); ``reverse``: the
    same order backwards (the tiebreak descending, NULLs first)."""
    if reverse:
        back = ", ".join(f"{col} DESC NULLS FIRST" for col in tiebreak.split(", "))
        return f"{sorts[sort]} {'ASC' if desc else 'DESC'} NULLS FIRST, {back}"
    return f"{sorts[sort]} {'DESC' if desc else 'ASC'} NULLS LAST, {tiebreak}"


def search_pattern(text: str) -> str:
    """A regular expression (RE2) matching ``text`` as it is, ignoring case when it has letters of two
    cases (a text in Chinese, or digits, is matched as is: the same, faster)."""
    literal = "".join(
        "\\" + ch if ch.isascii() and not ch.isalnum() and not ch.isspace() else ch for ch in text
    )
    return ("(?i)" if text.lower() != text.upper() else "") + literal


def trace_filters(params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The conditions (`` AND ...``) of the trace list's filters that are set, and their parameters."""
    given = {k: v for k, v in params.items() if v is not None and k in TRACE_FILTERS}
    if "q" in given:
        given["q_re"] = search_pattern(str(given["q"]))
    return "".join(f" AND {TRACE_FILTERS[k]}" for k in TRACE_FILTERS if k in given), given


def traces_count(con: Con, params: dict[str, Any]) -> int:
    """How many traces match the trace list's filters (exact: a count of ``traces``)."""
    where, given = trace_filters(params)
    return int(run_select(con, filled("ui", "traces_count", where=where), given, row_cap=1).rows[0][0])


def read(con: Con, name: str, params: dict[str, Any] | None = None, row_cap: int = 10_000) -> QueryResult:
    """One of the UI's plain reads (``sql/ui/<name>.sql``)."""
    return run_select(con, sql("ui", name), params or {}, row_cap=row_cap)


def cases_page(
    con: Con,
    params: dict[str, Any],
    sort: str,
    desc: bool,
    limit: int,
    offset: int,
    causes: list[str],
    total: int | None = None,
) -> QueryResult:
    """A page of the case table and (``_total``) the count of the rows that match; sorted by root
    cause, in the order of ``causes``. Given the ``total``, a page past the middle is read in the
    reverse order from the other end and turned back (as ``traces_page``)."""
    reverse = False
    if total is not None:
        end = min(offset + limit, total)
        reverse = offset > 0 and offset + end > total
        if reverse:
            offset, limit = total - end, max(end - offset, 0)
    order = order_by(CASE_SORTS, sort, desc, "case_id, trace_id", reverse)
    params = {**params, "limit": limit, "offset": offset, "causes": causes}
    page = run_select(con, sql("ui", "cases_page").format(order=order), params, row_cap=max(limit, 1))
    if reverse:
        page.rows.reverse()
    return page


def traces_page(
    con: Con, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int, total: int
) -> QueryResult:
    """A page of the trace list. A page past the middle of the ``total`` matching traces is read in
    the reverse order from the other end (the last page is then as cheap as the first: sorting keeps
    ``offset + limit`` rows) and turned back."""
    where, given = trace_filters(params)
    end = min(offset + limit, total)
    reverse = offset > 0 and offset + end > total
    if reverse:
        offset, limit = total - end, max(end - offset, 0)
    order = order_by(TRACE_SORTS, sort, desc, "t.trace_id", reverse)
    text = filled("ui", "traces_page", where=where, order=order)
    page = run_select(con, text, {**given, "limit": limit, "offset": offset}, row_cap=max(limit, 1))
    if reverse:
        page.rows.reverse()
    return page


def traces_search(
    con: Con, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int
) -> QueryResult:
    """A page of the trace list under a text search (``q`` set) and, in ``_total``, the count of the
    traces that match: the texts are read once for both."""
    where, given = trace_filters(params)
    text = filled("ui", "traces_search", where=where, order=order_by(TRACE_SORTS, sort, desc, "t.trace_id"))
    return run_select(con, text, {**given, "limit": limit, "offset": offset}, row_cap=limit)


def trace_verdicts(con: Con, trace_id: str) -> QueryResult:
    """A trace's current verdicts; they were all written since its ``verdicts_since`` (when known),
    so the scan skips older rows."""
    since = con.execute(sql("ui", "verdicts_since"), {"t": trace_id}).fetchall()
    at: datetime | None = since[0][0] if since else None
    return run_select(con, sql("ui", "trace_verdicts"), {"t": trace_id, "since": at}, row_cap=5000)
