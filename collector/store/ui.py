"""What the web UI reads beyond the bundled queries and the dashboard's facts (``ui_facts``): the case
table and the trace list (paged, sorted from fixed lists), a review screen and a trace's verdicts. Each read runs
through ``reader.run_select`` (one SELECT in a read-only transaction, a row cap); the statements
are ``sql/ui/*.sql``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from collector.store.base import Con, operation
from collector.store.reader import QueryResult, run_select
from collector.store.sqlfiles import sql, statement
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

ROW_FILTERS = ("service", "run_id", "since", "until", "q")
"""The trace list's filters on a trace's own row, each a parameter of its statements (NULL: not given)."""
JOINED_FILTERS = ("feedback", "negative_feedback", "root_cause", "live", "live_cause")
"""Its filters that join another table (``feedback``, ``attribution``, ``evaluations``,
``live_attribution``): given one, the list runs its ``*_joined`` statements, which have them all. A
statement naming those tables costs their plan and a pass over every trace's id even when the filter
is NULL (an unfiltered page of 1,000,000 traces: 5 ms without them, 70 ms with), so the plain list's
statements leave them out. ``live``, ``negative_feedback`` and ``live_cause`` are the live page's
links: the traces ``online_health`` counts, those with negative feedback, and those whose
``live_attribution`` names a cause."""


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


def trace_list_statement(
    name: str, params: dict[str, Any], order: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The trace list's statement ``name`` for these filters (its ``_joined`` form when one of
    ``JOINED_FILTERS`` is given) and its parameters: each filter it has, NULL where not given, the
    text searched as a literal regular expression (``search_pattern``), and the page's bounds."""
    if any(params.get(k) is not None for k in JOINED_FILTERS):
        name += "_joined"
    q = params.get("q")
    given = {**params, "q_re": None if q is None else search_pattern(str(q))}
    declared = statement("ui", name).params
    text = filled("ui", name, order=order) if order is not None else filled("ui", name)
    return text, {k: given.get(k) for k in declared}


@operation
def traces_count(con: Con, params: dict[str, Any]) -> int:
    """How many traces match the trace list's filters (exact: a count of ``traces``)."""
    text, bound = trace_list_statement("traces_count", params)
    return int(run_select(con, text, bound, row_cap=1).rows[0][0])


@operation
def read(con: Con, name: str, params: dict[str, Any] | None = None, row_cap: int = 10_000) -> QueryResult:
    """One of the UI's plain reads (``sql/ui/<name>.sql``)."""
    return run_select(con, sql("ui", name), params or {}, row_cap=row_cap)


@operation
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


@operation
def traces_page(
    con: Con, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int, total: int
) -> QueryResult:
    """A page of the trace list. A page past the middle of the ``total`` matching traces is read in
    the reverse order from the other end (the last page is then as cheap as the first: sorting keeps
    ``offset + limit`` rows) and turned back."""
    end = min(offset + limit, total)
    reverse = offset > 0 and offset + end > total
    if reverse:
        offset, limit = total - end, max(end - offset, 0)
    order = order_by(TRACE_SORTS, sort, desc, "t.trace_id", reverse)
    text, bound = trace_list_statement("traces_page", {**params, "limit": limit, "offset": offset}, order)
    page = run_select(con, text, bound, row_cap=max(limit, 1))
    if reverse:
        page.rows.reverse()
    return page


@operation
def traces_search(
    con: Con, params: dict[str, Any], sort: str, desc: bool, limit: int, offset: int
) -> QueryResult:
    """A page of the trace list under a text search (``q`` set) and, in ``_total``, the count of the
    traces that match: the texts are read once for both."""
    order = order_by(TRACE_SORTS, sort, desc, "t.trace_id")
    text, bound = trace_list_statement("traces_search", {**params, "limit": limit, "offset": offset}, order)
    return run_select(con, text, bound, row_cap=limit)


@operation
def trace_verdicts(con: Con, trace_id: str) -> QueryResult:
    """A trace's current verdicts; they were all written since its ``verdicts_since`` (when known),
    so the scan skips older rows."""
    since = con.execute(sql("ui", "verdicts_since"), {"t": trace_id}).fetchall()
    at: datetime | None = since[0][0] if since else None
    return run_select(con, sql("ui", "trace_verdicts"), {"t": trace_id, "since": at}, row_cap=5000)
