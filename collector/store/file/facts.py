"""Facts a file store keeps per trace so that its views need not compute them from every verdict.

``attribution_facts`` (migration 027) holds, for each trace with a gold case, the row
``queries/attribution.sql`` computes from the trace's verdicts: root cause, failing layers,
evidence, the metric values and the missing fields; ``live_attribution_facts`` the row
``queries/live_attribution.sql`` computes for a trace of live traffic. ``refresh`` replaces the rows of a batch's traces
inside the transaction that writes their verdicts (``verdicts.write_verdicts``): it reads those traces'
current verdicts (from when their verdicts start, so older row groups are skipped) and their rows of
traces, steps and documents (from when they were first received) as common table expressions named
``evaluations``, ``traces``, ``steps`` and ``step_documents`` in the one statement that computes a
facts table, and runs the bundled statement itself over them. So the facts are that statement's rows by construction, and a reader sees verdicts and facts
change together. The file's views (``sql/views/``) read the facts and join the gold case and the trace
for the columns that do not come from the verdicts. A fact does not depend on whether its trace is
settled now (the statement reads the trace as settled; the view asks). ``live_attribution`` leaves out
the verdicts of a stored gold case, so storing cases computes again the facts of the traces whose
verdicts name them (``refresh_cases``, from ``references.upsert_gold``).

A store migrated to 027 with verdicts already written computes the table in full when it next opens for
writing (``fill_pending``); ``bench/same_results.py`` and ``tests/store/test_attribution_facts.py``
check the view against the definition run over the verdicts.

A lake keeps no facts: its views are the plain statements.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

import pyarrow as pa

from collector.model import ATTRIBUTION, LIVE_ATTRIBUTION, TRACE_HEALTH, Table
from collector.store.base import Con
from collector.store.templates import filled
from collector.store.tx import transaction

AREA = "file/facts"


FACTS: tuple[Table, ...] = (ATTRIBUTION, LIVE_ATTRIBUTION, TRACE_HEALTH)
"""Every facts table: ``<view>_facts`` keeps the rows of the bundled view ``<view>`` (``view_of``)."""
SETTLED: tuple[Table, ...] = (TRACE_HEALTH,)
"""The facts whose statement reads what settling writes (steps, documents): computed again as traces settle."""


def view_of(table: Table) -> str:
    """The bundled view whose rows ``table`` keeps."""
    return table.name.removesuffix("_facts")


def definition(table: Table) -> str:
    """The bundled statement whose rows ``table`` keeps (``queries/<view>.sql``)."""
    from queries import all_queries

    return all_queries()[view_of(table)].sql


def view_bodies() -> dict[str, str]:
    """The file store's own statement of each view backed by facts, by view name (the other views are the
    bundled statements as they are)."""
    return {view_of(t): filled("file/views", view_of(t)) for t in FACTS}


def _insert(con: Con, table: Table, statement: str, params: dict[str, Any] | None = None) -> None:
    columns = ", ".join(table.names)
    con.execute(filled(AREA, statement, table=table.name, columns=columns, body=definition(table)), params)


class Needed(NamedTuple):
    """Whether a batch's new verdicts can give its traces attribution and live_attribution rows."""

    gold: bool
    live: bool


def needed(con: Con) -> Needed:
    """``Needed`` of the new verdicts registered as ``_evals`` (``write_verdicts``)."""
    gold, live = con.execute(filled(AREA, "needed")).fetchall()[0]
    return Needed(bool(gold), bool(live))


def refresh(
    con: Con,
    since: datetime | None,
    received_since: datetime | None = None,
    tables: tuple[Table, ...] = FACTS,
    new: Needed | None = None,
) -> None:
    """Compute again the facts (``tables``) of the traces registered as ``_done``, whose verdicts (or
    assembly) were just written in this transaction. ``since``: a time none of their current verdicts was
    written before; ``received_since``: none of their spans was received before (None: unknown, every
    row is read). ``new``: what the batch's new verdicts can give; a table they can give no row, for
    traces that had none, is not computed (a trace gets an attribution or live_attribution row only from
    a verdict that qualifies, and earlier ones that did gave it a row already). Each statement plans
    and runs in some milliseconds whatever the batch, so what need not run does not."""
    params = {"since": since, "received_since": received_since}
    cannot = {} if new is None else {ATTRIBUTION.name: not new.gold, LIVE_ATTRIBUTION.name: not new.live}
    for table in tables:
        deleted = con.execute(filled(AREA, "delete_rows", table=table.name)).fetchall()[0][0]
        if deleted or not cannot.get(table.name, False):
            _insert(con, table, "insert_rows", params)


def refresh_cases(con: Con) -> int:
    """Compute again, in the transaction that stores the gold cases registered as ``_gold``, the facts of
    the traces whose verdicts name one of them (``live_attribution`` leaves out the verdicts of a stored
    case, so a case stored now moves them). Reads every verdict's case id: a load of gold cases is rare.
    Returns the traces computed again."""
    ids: pa.Table = con.sql(filled(AREA, "traces_of_cases")).to_arrow_table()
    if not ids.num_rows:
        return 0
    con.register("_done", ids)
    try:
        refresh(con, None)
    finally:
        con.unregister("_done")
    return int(ids.num_rows)


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
            _insert(con, table, "fill_rows")
            con.execute(filled(AREA, "filled"), {"name": table.name})
        done.append(table.name)
    return done
