"""Facts a file store keeps per trace so that its views need not compute them from every verdict.

``attribution_facts`` (migration 027) holds, for each trace with a gold case, the row
``queries/attribution.sql`` computes from the trace's verdicts: root cause, failing layers, evidence,
the metric values and the missing fields; ``live_attribution_facts`` the row
``queries/live_attribution.sql`` computes for a trace of live traffic; ``trace_health_facts`` the row
``queries/trace_health.sql`` computes from a trace's steps, documents and verdicts;
``trace_coverage_facts`` (migration 030) the row ``queries/trace_coverage.sql`` computes from a trace's
steps and documents and the gold cases its verdicts name; ``case_verdicts_facts`` (migration 031) the
rows ``queries/case_verdicts.sql`` selects: a gold-case trace's verdicts that the gold-set reports read.
What only the registry decides stays out of them (``coverage`` looks it up when read); a registry load
that gives stored documents their text computes those traces' facts again (``refresh_traces``).

**Changed, then computed in batches** (migration 028). The transaction that writes a batch's verdicts
(``verdicts.write_verdicts``) or its assembly (``settling.write_settled``) names its traces in
``facts_changed`` (``changed``), with a time none of their current verdicts was written before and one
none of their rows was received before. The facts views (``sql/views/``) read ``sql/facts/current``: the
kept facts of every other trace, and for the changed traces the rows the bundled statement gives now
(``sql/facts/changed_rows``: common table expressions named ``evaluations``, ``traces``, ``steps`` and
``step_documents`` stand for those traces' rows, read from the least of those times on, so older row
groups are skipped). So a reader sees verdicts and facts change together, and the facts are the
statement's rows by construction. A write that leaves ``FLUSH_TRACES`` changed traces or more, or one
whose rows go back further than ``FLUSH_AGE``, flushes them in the same transaction: their facts are
deleted, computed and inserted, and ``facts_changed`` is emptied. Each statement costs some milliseconds
whatever the number of traces, so a flush every ``FLUSH_TRACES`` traces costs a small part of one per
write; a read computes at most that many traces, over rows written in at most about ``FLUSH_AGE``.

``live_attribution`` leaves out the verdicts of a stored gold case, so storing cases flushes the traces
whose verdicts name them (``refresh_cases``, from ``references.upsert_gold``). A store migrated to 027
with verdicts already written computes the tables in full when it next opens for writing
(``fill_pending``). ``bench/same_results.py`` and ``tests/store/contract/test_attribution_facts.py``
check each view against its definition run over every row.

A lake keeps no facts: its views are the plain statements.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pyarrow as pa

from collector.model import ATTRIBUTION, CASE_VERDICTS, LIVE_ATTRIBUTION, TRACE_COVERAGE, TRACE_HEALTH, Table
from collector.store.base import Con
from collector.store.templates import filled
from collector.store.tx import transaction

AREA = "file/facts"


FACTS: tuple[Table, ...] = (ATTRIBUTION, LIVE_ATTRIBUTION, TRACE_HEALTH, TRACE_COVERAGE, CASE_VERDICTS)
"""Every facts table: ``<view>_facts`` keeps the rows of the bundled view ``<view>`` (``view_of``)."""


def view_of(table: Table) -> str:
    """The bundled view whose rows ``table`` keeps."""
    return table.name.removesuffix("_facts")


def definition(table: Table) -> str:
    """The bundled statement whose rows ``table`` keeps (``queries/<view>.sql``)."""
    from queries import all_queries

    return all_queries()[view_of(table)].sql


FLUSH_TRACES = 2000
"""A write that leaves this many changed traces (distinct in ``facts_changed``) or more flushes them."""
FLUSH_AGE = timedelta(minutes=5)
"""A write that leaves a changed trace whose verdicts or rows were written longer than this before it
flushes them: a read of the facts views scans at most about this much of the tables' newest rows."""


def _columns(table: Table) -> str:
    return ", ".join(table.names)


def changed_rows(table: Table) -> str:
    """The statement that gives ``table``'s rows for the traces in ``facts_changed``."""
    return filled(AREA, "changed_rows", columns=_columns(table), body=definition(table))


def current(table: Table) -> str:
    """The statement that gives ``table``'s rows as they are now (``sql/facts/current``)."""
    return filled(AREA, "current", table=table.name, columns=_columns(table), body=changed_rows(table))


def view_bodies() -> dict[str, str]:
    """The file store's own statement of each view backed by facts, by view name (the other views are the
    bundled statements as they are)."""
    return {view_of(t): filled("file/views", view_of(t), body=current(t)) for t in FACTS}


def changed(con: Con, since: datetime | None, received_since: datetime | None, now: datetime) -> bool:
    """Name the traces registered as ``_done`` in ``facts_changed``: a write in this transaction changed
    their verdicts or their assembly. ``since``: a time none of their current verdicts was written before;
    ``received_since``: none of their rows was received before (None: not known, every row is read).
    Flushes when ``FLUSH_TRACES`` or more are changed, or one of them reads from before ``now`` less
    ``FLUSH_AGE``; returns whether it did."""
    con.execute(filled(AREA, "mark_changed"), {"since": since, "received_since": received_since})
    traces, oldest = con.execute(filled(AREA, "changed_state")).fetchall()[0]
    recent = oldest is not None and oldest >= now - FLUSH_AGE
    if traces < FLUSH_TRACES and recent:
        return False
    flush(con, reach_back=not recent)
    return True


SOURCES = ("evaluations", "traces", "steps", "step_documents")
"""The tables the facts statements read a changed trace's rows of (``sql/facts/changed_rows``)."""


def flush(con: Con, reach_back: bool = True) -> None:
    """Compute the facts of every trace in ``facts_changed``, in the caller's transaction, and empty it.

    ``reach_back``: some changed trace's rows go back further than ``FLUSH_AGE`` (or to the start: a
    registry or gold-case load names traces without a bound). Then the changed traces' rows of each
    source table are read once and kept for the flush (``sql/facts/flush_take``), and every facts
    statement reads those: each statement reads its tables in several narrow passes, and traces
    evaluated again long after their first verdicts make each pass scan the tables from then on (at
    1M traces, 64 such traces: 8.0 s with a scan a pass, 3.4 s with one a table). Otherwise the rows
    are recent, a pass skips the older row groups, and each statement reads only the columns it needs
    (``sql/facts/changed_rows``): keeping every column of 2,000 traces' rows cost settling a write
    three quarters more."""
    if reach_back:
        for source in SOURCES:
            rows = filled(AREA, "changed_rows", columns="*", body=filled(AREA, "source_rows", table=source))
            con.execute(filled(AREA, "flush_take", table=source, body=rows))
    for table in FACTS:
        con.execute(filled(AREA, "delete_changed", table=table.name))
        cols = _columns(table)
        body = (
            filled(AREA, "flush_rows", columns=cols, body=definition(table))
            if reach_back
            else changed_rows(table)
        )
        con.execute(filled(AREA, "insert_changed", table=table.name, columns=cols, body=body))
    con.execute(filled(AREA, "clear_changed"))
    if reach_back:  # (a flush that fails leaves them to the caller's rollback, which drops what it made)
        for source in SOURCES:
            con.execute(filled(AREA, "flush_drop", table=source))


def refresh_cases(con: Con) -> int:
    """Compute again, in the transaction that stores the gold cases registered as ``_gold``, the facts of
    the traces whose verdicts name one of them (``live_attribution`` leaves out the verdicts of a stored
    case, so a case stored now moves them). Reads every verdict's case id: a load of gold cases is rare.
    Returns the traces computed again."""
    ids: pa.Table = con.sql(filled(AREA, "traces_of_cases")).to_arrow_table()
    if not ids.num_rows:
        return 0
    _refresh(con, ids)
    return int(ids.num_rows)


def refresh_traces(con: Con, trace_ids: list[str]) -> None:
    """Compute again, in the caller's transaction, the facts of traces whose stored rows a write changed
    in place rather than appended: a registry load gave their textless documents the registry's text
    (``references.upsert_kb``), which ``trace_coverage`` counts. Rare: every row of theirs is read."""
    if trace_ids:
        _refresh(con, pa.table({"trace_id": pa.array(trace_ids, pa.string())}))


def _refresh(con: Con, ids: pa.Table) -> None:
    con.register("_done", ids)
    try:
        con.execute(filled(AREA, "mark_changed"), {"since": None, "received_since": None})
    finally:
        con.unregister("_done")
    flush(con)


def fill_pending(con: Con) -> list[str]:
    """Compute in full every facts table migration 027 (or a later one) left pending, each in its own
    transaction; returns their names. A fill cut short is pending still, and runs again at the next open."""
    pending = [r[0] for r in con.execute(filled(AREA, "pending")).fetchall()]
    done = []
    for table in FACTS:
        if table.name not in pending:
            continue
        with transaction(con):
            con.execute(filled(AREA, "clear", table=table.name))
            con.execute(
                filled(AREA, "fill_rows", table=table.name, columns=_columns(table), body=definition(table))
            )
            con.execute(filled(AREA, "filled"), {"name": table.name})
        done.append(table.name)
    return done
