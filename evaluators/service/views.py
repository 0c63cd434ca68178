"""From stored rows to what the evaluators read: the rows of a batch of traces (fetched by
``collector.store.verdicts.fetch_traces``), built into ``TraceView``s, each joined to its gold case
and the registry as an ``EvalInput``."""

from __future__ import annotations

from dataclasses import fields, replace
from itertools import repeat
from operator import itemgetter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.settling.assemble import answer_prompt
from collector.store import verdicts
from collector.store.base import Tx
from collector.store.reader import Window
from collector.store.verdicts import TraceTables
from evaluators.eval_input import EvalInput
from evaluators.service.references import References, _loads
from evaluators.trace_view import StepDoc, StepInfo, TraceView


def fetch_tables(con: Tx, trace_ids: list[str]) -> TraceTables:
    """The stored rows of the given traces (missing ids have none), fetched column-wise."""
    return fetch_with_window(con, trace_ids)[0]


def fetch_with_window(con: Tx, trace_ids: list[str], hint: Window = None) -> tuple[TraceTables, Window]:
    """``fetch_tables``, and the range of the fetched traces' ``first_received_at`` (for
    ``write_job``: writing their verdicts looks them up again). ``hint``: that range as the caller
    read it with the ids, which limits looking them up (``traces_in_range``)."""
    return verdicts.fetch_traces(con, trace_ids, hint)


def _pylist(column: pa.ChunkedArray) -> list[Any]:
    """A column as Python values; a dictionary-encoded one with one object per distinct value."""
    if _is_naive_us(column.type):
        return _datetimes(column)
    if not pa.types.is_dictionary(column.type):
        return column.to_pylist()  # type: ignore[no-any-return]
    out: list[Any] = []
    for chunk in column.chunks:
        values = chunk.dictionary.to_pylist()
        values.append(None)  # where a null index points
        indices = pc.fill_null(chunk.indices, len(values) - 1).to_pylist()
        out.extend(map(values.__getitem__, indices))
    return out


def _is_naive_us(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) and t.unit == "us" and t.tz is None


def _datetimes(column: pa.ChunkedArray) -> list[Any]:
    """A naive microsecond timestamp column as ``datetime``s (None for nulls), as ``to_pylist``
    gives them, through NumPy's conversion: ``to_pylist`` builds each value through an Arrow scalar,
    about fifty times slower."""
    out: list[Any] = column.to_numpy().tolist()
    if int in set(map(type, out)):  # beyond datetime's years 1-9999: to_pylist's error
        return column.to_pylist()  # type: ignore[no-any-return]
    return out


def _columns(table: pa.Table) -> list[list[Any]]:
    return [_pylist(c) for c in table.columns]


_DOC_ORDER = itemgetter(0, 1, 2)  # StepDoc's span_id, stage, position

_new_object = object.__new__
_VIEW_FIELDS = tuple(f.name for f in fields(TraceView))
# StepInfo's slots, set directly (its frozen dataclass __init__ goes through object.__setattr__,
# looking each name up): the views hold immutable steps all the same
_STEP_SETTERS = tuple(StepInfo.__dict__[f.name].__set__ for f in fields(StepInfo))


def _new_step(leading: tuple[Any, ...], citations: tuple[str, ...], is_root: bool) -> StepInfo:
    """``StepInfo(*leading, citations=citations, is_root=is_root)``, with every field given."""
    step: StepInfo = _new_object(StepInfo)
    for set_field, value in zip(_STEP_SETTERS, (*leading, citations, is_root), strict=True):
        set_field(step, value)
    return step


def _doc_order_with_missing(doc: StepDoc) -> tuple[str, str, bool, int]:
    return doc.span_id, doc.stage, doc.position is None, doc.position or 0


def views_from_tables(tables: TraceTables) -> tuple[list[TraceView], dict[str, int]]:
    """TraceViews of fetched rows and each trace's current generation."""
    t = _columns(tables.traces)
    steps: dict[str, list[StepInfo]] = {tid: [] for tid in t[0]}
    if tables.steps.num_rows:
        c = _columns(tables.steps)
        citations, is_root = c[20], c[21]
        # c[1:20] are StepInfo's 19 leading fields, in _STEP_COLS order
        for i, row in enumerate(zip(*c[1:20], strict=True)):
            steps[c[0][i]].append(_new_step(row, tuple(citations[i] or ()), bool(is_root[i])))
    docs: dict[str, list[StepDoc]] = {tid: [] for tid in t[0]}
    if tables.docs.num_rows:
        c = _columns(tables.docs)
        # the same metadata text comes back for each stage a document is in: parsed once a batch
        # (StepDoc is frozen and evaluators only read it, so the parsed dicts are shared)
        parsed: dict[str | None, dict[str, Any] | None] = {None: None}
        for raw in set(c[8]):
            if raw is not None:
                value = _loads(raw)
                parsed[raw] = value if isinstance(value, dict) else None
        c[8] = list(map(parsed.__getitem__, c[8]))
        # tuple.__new__ directly: the NamedTuple's own __new__ is a Python function
        for tid, doc in zip(c[0], map(tuple.__new__, repeat(StepDoc), zip(*c[1:], strict=True)), strict=True):
            docs[tid].append(doc)
        # a trace's documents in (span, stage, position) order, positions missing last: the order
        # decides which copy of a document counts first. Sorted here rather than in the query, where
        # it cost the process that owns the database about twice as much; the rows mostly come
        # back in this order, which Python's sort only checks.
        for trace_docs in docs.values():
            try:
                trace_docs.sort(key=_DOC_ORDER)
            except TypeError:  # a missing position compared with a number
                trace_docs.sort(key=_doc_order_with_missing)
    views = []
    gens = {}
    for trow in zip(*t, strict=True):
        (
            tid,
            start,
            end,
            service,
            case_id,
            run_id,
            session,
            user,
            scope,
            query,
            answer,
            answer_span,
            errors,
            gen,
        ) = trow
        if answer_span:
            _answer_prompt(steps[tid], answer_span)
        view = _new_object(TraceView)
        # every field, in TraceView's order (a frozen dataclass: its __init__ sets each through
        # object.__setattr__)
        view.__dict__.update(
            zip(
                _VIEW_FIELDS,
                (
                    tid, start, end, service, case_id, run_id, session, user,
                    tuple(scope) if scope else None, query, answer, answer_span, int(errors or 0),
                    tuple(steps[tid]), tuple(docs[tid]),
                ),
                strict=True,
            )
        )  # fmt: skip
        views.append(view)
        gens[tid] = int(gen)
    return views, gens


def _answer_prompt(steps: list[StepInfo], answer_span: str) -> None:
    """The answering call's step with the prompt it was given, when its span did not record it but a
    span around it did (``collector.settling.assemble.answer_prompt``: the span the context was derived
    from, e.g. a custom LLM's inner task): evaluators then read what the model saw, not nothing."""
    for i, step in enumerate(steps):
        if step.span_id == answer_span:
            if not step.input_text:
                found = answer_prompt(step, steps)
                if found is not None:
                    steps[i] = replace(step, input_text=found[1])
            return


def load_views(con: Tx, trace_ids: list[str]) -> tuple[list[TraceView], dict[str, int]]:
    """TraceViews of the given ids (missing ids are skipped) and each trace's current generation."""
    return views_from_tables(fetch_tables(con, trace_ids))


def make_inputs(refs: References, views: list[TraceView], source_keys: tuple[str, ...]) -> list[EvalInput]:
    """Each view with its gold case, the registry and the time it is judged at."""
    out = []
    for v in views:
        case = refs.case_for(v)
        as_of = case.as_of if case is not None and case.as_of else v.start_time
        out.append(EvalInput(v, case, refs.kb, as_of, source_keys))
    return out
