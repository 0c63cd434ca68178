"""The facts the sampler decides on (``evaluators.service.sampling_decision``), for a batch of traces whose
cheap tier ran: taken from the rows the batch was evaluated from and those written for it
(``written_facts``), or read back from the tables (``load_facts``), with feedback and the root
span's attributes read in either case."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from collector.store import sampling as store_sampling
from collector.store.base import Tx
from collector.store.reader import Window
from collector.store.verdicts import TraceTables
from evaluators.service.sampling_decision import TraceFacts
from evaluators.service.sampling_settings import SamplingSettings


def _loads(raw: Any) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        out = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return out if isinstance(out, dict) else {}


@dataclass(frozen=True)
class WrittenFacts:
    """What a trace's batch, as fetched and evaluated, tells the sampler once its cheap verdicts
    are written (``written_facts``), or the same read back from the tables: every fact but negative
    feedback and the root attributes."""

    service_name: str | None
    run_id: str | None
    route: str | None
    error_count: int
    empty_retrieval: bool
    flagged: frozenset[str]  # the stale, forbidden and undecided-claim metrics that counted something
    generation: int  # the generation written


_DOC_STAGES = pa.array(["candidate", "rerank_input"])  # a retrieval with none of these retrieved nothing


def written_facts(
    tables: TraceTables, evals: pa.Table, log: pa.Table, settings: SamplingSettings
) -> dict[str, WrittenFacts]:
    """The sampler's facts of a batch's traces from the rows it was evaluated from (``tables``) and
    the rows written for it (``evals``, ``log``: ``evaluators.service.running.EvalTables``), so that
    deciding the judge tier of a written batch reads only feedback (and root attributes) back.
    The same facts as ``collector.store.sampling.fact_rows`` reads from the tables after the write:
    the trace's row, whether a retrieval step has no candidate or reranker-input document, the
    flagged metrics among its cheap verdicts just written, the generation written. Empty when the
    tables carry no root spans (fetched by another path)."""
    if tables.roots is None:
        return {}
    roots = dict(
        zip(
            tables.roots.column("trace_id").to_pylist(),
            tables.roots.column("root_name").to_pylist(),
            strict=True,
        )
    )
    steps, docs = tables.steps, tables.docs
    # traces with a retrieval step that recorded its output: one that recorded neither documents
    # nor an output value is unknown, not empty (``evaluators.builtin._recorded``)
    recorded = pc.or_kleene(
        pc.greater(pc.utf8_length(steps.column("output_text")), 0),
        pc.greater(pc.utf8_length(steps.column("tool_result")), 0),
    )
    is_retrieval = pc.and_kleene(pc.equal(steps.column("step_type"), "retrieval"), recorded)
    retrieving = set(pc.filter(steps.column("trace_id"), is_retrieval).to_pylist())
    stage = docs.column("stage")
    if pa.types.is_dictionary(stage.type):
        stage = stage.cast(pa.string())
    retrieved = set(pc.filter(docs.column("trace_id"), pc.is_in(stage, value_set=_DOC_STAGES)).to_pylist())
    flagged: dict[str, set[str]] = {}
    metrics = (
        list(settings.stale_metrics) + list(settings.forbidden_metrics) + list(settings.undecided_metrics)
    )
    if metrics and evals.num_rows:
        ok = pc.and_(
            pc.and_(
                pc.is_in(evals.column("metric"), value_set=pa.array(metrics, pa.string())),
                pc.equal(evals.column("status"), "ok"),
            ),
            pc.greater(evals.column("numerator"), 0),
        )
        hits = evals.select(["trace_id", "metric"]).filter(ok)  # a NULL numerator is no hit, as in SQL
        for tid, metric in zip(
            hits.column("trace_id").to_pylist(), hits.column("metric").to_pylist(), strict=True
        ):
            flagged.setdefault(tid, set()).add(metric)
    written = dict(zip(log.column("trace_id").to_pylist(), log.column("generation").to_pylist(), strict=True))
    t = tables.traces
    out = {}
    for tid, service, run_id, errors in zip(
        t.column("trace_id").to_pylist(),
        t.column("service_name").to_pylist(),
        t.column("run_id").to_pylist(),
        t.column("error_count").to_pylist(),
        strict=True,
    ):
        gen = written.get(tid)
        if gen is None:  # not written with this batch
            continue
        out[tid] = WrittenFacts(
            service_name=service,
            run_id=run_id,
            route=roots.get(tid),
            error_count=int(errors or 0),
            empty_retrieval=tid in retrieving and tid not in retrieved,
            flagged=frozenset(flagged.get(tid, ())),
            generation=int(gen),
        )
    return out


def load_facts(
    con: Tx,
    trace_ids: list[str],
    settings: SamplingSettings,
    hint: Window = None,
    written_since: datetime | None = None,
    written: Mapping[str, WrittenFacts] | None = None,
) -> list[TraceFacts]:
    """Facts of the given traces (after their cheap tier ran), in one pass per table. ``hint``:
    the range of the traces' ``first_received_at`` read with their ids (``traces_in_range``).
    ``written_since``: the caller wrote the traces' cheap verdicts after this time, so only
    ``evaluations`` rows written since are read (the table is in the order rows were written: the
    scan skips the rest of it, which holds dozens of rows for every trace ever evaluated).
    ``written``: what the caller knows of some of them from their batches (``written_facts``);
    of those, only feedback and root attributes are read."""
    if not trace_ids:
        return []
    known = {t: written[t] for t in dict.fromkeys(trace_ids) if t in written} if written else {}
    rest = [t for t in trace_ids if t not in known]
    out = _read_facts(con, rest, settings, hint, written_since) if rest else []
    if known:
        negative, attribute_rows = store_sampling.feedback_rows(
            con, list(known), list(settings.feedback_annotator_kinds), settings.needs_attributes()
        )
        out += _trace_facts(known, negative, attribute_rows, settings)
    return out


def _trace_facts(
    facts: Mapping[str, WrittenFacts],
    negative: set[str],
    attribute_rows: Mapping[str, tuple[Any, Any]],
    settings: SamplingSettings,
) -> list[TraceFacts]:
    """The sampler's facts of each trace: what its batch (or the tables) told, its feedback and its
    root attributes."""
    attrs = _merged_attributes(attribute_rows)
    stale_m, forbidden_m = set(settings.stale_metrics), set(settings.forbidden_metrics)
    undecided_m = set(settings.undecided_metrics)
    return [
        TraceFacts(
            trace_id=tid,
            service_name=w.service_name,
            run_id=w.run_id,
            route=w.route,
            attributes=attrs.get(tid, {}),
            error_count=w.error_count,
            empty_retrieval=w.empty_retrieval,
            stale=bool(w.flagged & stale_m),
            forbidden=bool(w.flagged & forbidden_m),
            negative_feedback=tid in negative,
            undecided=bool(w.flagged & undecided_m),
            generation=w.generation,
        )  # fmt: skip
        for tid, w in facts.items()
    ]


def _merged_attributes(rows: Mapping[str, tuple[Any, Any]]) -> dict[str, dict[str, Any]]:
    """Each trace's resource attributes, overridden by its root span's."""
    attrs: dict[str, dict[str, Any]] = {}
    for tid, (a, ra) in rows.items():
        merged = _loads(ra)
        merged.update(_loads(a))
        attrs[tid] = merged
    return attrs


def _read_facts(
    con: Tx, trace_ids: list[str], settings: SamplingSettings, hint: Window, written_since: datetime | None
) -> list[TraceFacts]:
    """The facts read back from the tables (``collector.store.sampling.fact_rows``)."""
    metrics = (
        list(settings.stale_metrics) + list(settings.forbidden_metrics) + list(settings.undecided_metrics)
    )
    found = store_sampling.fact_rows(
        con,
        trace_ids,
        metrics,
        list(settings.feedback_annotator_kinds),
        settings.needs_attributes(),
        hint,
        written_since,
    )
    facts = {
        tid: WrittenFacts(
            service_name=service,
            run_id=run_id,
            route=route,
            error_count=int(errors),
            empty_retrieval=tid in found.empty_retrieval,
            flagged=frozenset(found.flagged.get(tid, ())),
            generation=int(gen),
        )
        for tid, service, run_id, route, errors, _root, gen in found.traces
    }
    return _trace_facts(facts, found.negative, found.attributes, settings)
