"""What the sampler reads about a batch of traces once their cheap tier ran (``evaluators.service.sampling``
decides from it). The statements are ``sql/sampling/*.sql``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from collector.store.base import Con, operation
from collector.store.reader import Window, received_window, traces_in_range, window_params
from collector.store.sqlfiles import sql
from collector.store.verdicts import ids_table, registered


@dataclass
class FactRows:
    """The rows the sampler's facts are made of."""

    traces: list[
        tuple[Any, ...]
    ]  # trace_id, service_name, run_id, root_name, error_count, root_span_id, generation
    empty_retrieval: set[str] = field(default_factory=set)
    flagged: dict[str, set[str]] = field(default_factory=dict)  # trace id -> metrics that counted one
    negative: set[str] = field(default_factory=set)
    attributes: dict[str, tuple[Any, Any]] = field(
        default_factory=dict
    )  # trace id -> (root attrs, resource attrs)


@operation
def fact_rows(
    con: Con,
    trace_ids: list[str],
    flag_metrics: list[str],
    annotator_kinds: list[str],
    with_attributes: bool,
    hint: Window = None,
    written_since: datetime | None = None,
) -> FactRows:
    """The rows of these traces, one pass per table. ``hint``: the range of their
    ``first_received_at`` read with the ids (``traces_in_range``). ``written_since``: their cheap
    verdicts were written after this time, so only ``evaluations`` rows written since are read (the
    table is in the order rows were written: the scan skips the rest of it)."""
    if not trace_ids:
        return FactRows([])
    with registered(con, {"_s_ids": ids_table(trace_ids)}):
        facts_sql = sql("sampling", "trace_facts")

        def run(params: dict[str, Any]) -> list[Any]:
            return con.execute(facts_sql, params).fetchall()

        rows = traces_in_range(run, len, lambda a, b: a + b, len(set(trace_ids)), hint)
        # the steps and documents of these traces were received in their window: the scans skip
        # the rest of the tables (migration 005)
        window = window_params(received_window([(r[7], r[8]) for r in rows]))
        out = FactRows([tuple(r[:7]) for r in rows])
        out.empty_retrieval = {
            r[0] for r in con.execute(sql("sampling", "empty_retrieval"), window).fetchall()
        }
        if flag_metrics:
            given = {"m": flag_metrics, "since": written_since}
            for tid, metric in con.execute(sql("sampling", "flagged"), given).fetchall():
                out.flagged.setdefault(tid, set()).add(metric)
        out.negative, out.attributes = _feedback_and_attributes(con, annotator_kinds, with_attributes)
    return out


@operation
def feedback_rows(
    con: Con, trace_ids: list[str], annotator_kinds: list[str], with_attributes: bool
) -> tuple[set[str], dict[str, tuple[Any, Any]]]:
    """Of these traces: those with negative feedback from one of the annotator kinds, and (when
    ``with_attributes``) each one's root attributes and resource attributes. What ``fact_rows``
    reads that the write of a batch's verdicts does not tell: feedback arrives at any time, and the
    fetched rows of a batch hold no attributes."""
    if not trace_ids:
        return set(), {}
    with registered(con, {"_s_ids": ids_table(trace_ids)}):
        return _feedback_and_attributes(con, annotator_kinds, with_attributes)


def _feedback_and_attributes(
    con: Con, annotator_kinds: list[str], with_attributes: bool
) -> tuple[set[str], dict[str, tuple[Any, Any]]]:
    negative = {
        r[0] for r in con.execute(sql("sampling", "negative_feedback"), {"k": annotator_kinds}).fetchall()
    }
    attributes: dict[str, tuple[Any, Any]] = {}
    if with_attributes:
        for tid, attrs, resource in con.execute(sql("sampling", "root_attributes")).fetchall():
            attributes[tid] = (attrs, resource)
    return negative, attributes
