"""Running evaluators over stored traces: load views, run pure evaluators, write verdicts.

``Runner`` is pure (inputs in, metric rows out). ``StoreRunner`` fetches traces, gold cases and the
knowledge base with a read cursor and writes through a callable that runs a function on the writing
connection (the writer thread in a server, the connection itself in the CLI). An evaluator that
raises yields a row with status ``error``; the rest of the batch is written.
"""

from __future__ import annotations

import gc
import logging
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import accumulate, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ValidationError

from collector.jsonvalue import loads as loads_json
from collector.store import references, verdicts
from collector.store.base import Tx
from collector.store.reader import Window, first_received_range
from collector.store.verdicts import EVAL_COLUMNS as EVAL_COLUMNS  # re-exported: its old home
from collector.store.verdicts import TraceTables as TraceTables
from collector.store.verdicts import verdicts_since_sql as verdicts_since_sql
from evaluators.base import EvalInput, EvaluatorSpec, KnowledgeBase, Metric, StepDoc, StepInfo, TraceView
from evaluators.gold import GoldCase, KBDocument
from evaluators.text import normalize

if TYPE_CHECKING:
    from evaluators.pool import EvalPool

log = logging.getLogger("ragfault.evaluate")

WriteFn = Callable[[Callable[[Tx], Any]], Any]

EVAL_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("span_id", pa.string()), ("case_id", pa.string()), ("run_id", pa.string()),
        ("evaluator", pa.string()), ("evaluator_version", pa.string()), ("tier", pa.string()),
        ("metric", pa.string()), ("value", pa.float64()), ("numerator", pa.float64()),
        ("denominator", pa.float64()), ("status", pa.string()), ("reason", pa.string()),
        ("passed", pa.bool_()), ("label", pa.string()), ("details", pa.string()),
        ("generation", pa.int32()), ("evaluated_at", pa.timestamp("us")),
    ]
)  # fmt: skip

LOG_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("tier", pa.string()), ("evaluator", pa.string()),
        ("decision", pa.string()), ("reason", pa.string()), ("generation", pa.int32()),
        ("logged_at", pa.timestamp("us")),
    ]
)  # fmt: skip


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a batch is evaluated.

    A batch allocates and keeps hundreds of thousands of small objects (views, documents, metric
    rows) until it is written; with the collector on, they trigger full collections that traverse
    all of them several times per batch (a third of the evaluation time). Almost none are in
    reference cycles, so reference counting frees them when the batch ends; the collector resumes
    then and takes the rest.
    Nested and concurrent batches share one pause.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


class Runner:
    """Runs the configured evaluators of one tier over an EvalInput."""

    def __init__(
        self, specs: dict[str, EvaluatorSpec], configs: dict[str, BaseModel], tier: str = "cheap"
    ) -> None:
        self.specs = {n: specs[n] for n in configs if specs[n].tier == tier}
        self.configs = configs
        self.tier = tier

    def run(self, inp: EvalInput) -> list[tuple[EvaluatorSpec, Metric]]:
        return [(spec, m) for spec, metrics in self.run_grouped(inp) for m in metrics]

    def run_grouped(self, inp: EvalInput) -> list[tuple[EvaluatorSpec, list[Metric]]]:
        """Each evaluator that ran with the metrics it returned (an error row when it raised or
        returned anything but Metrics)."""
        out: list[tuple[EvaluatorSpec, list[Metric]]] = []
        for name, spec in self.specs.items():
            if spec.needs_case and inp.case is None:
                continue
            try:
                metrics = spec.fn(inp, self.configs[name])
                if type(metrics) is not list:
                    metrics = list(metrics)
                if not set(map(type, metrics)) <= _METRIC_TYPE:
                    bad = next(type(m).__name__ for m in metrics if type(m) is not Metric)
                    raise TypeError(f"{name} returned a {bad}, not a Metric")
            except Exception as exc:  # an evaluator bug is a verdict, never a lost batch
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                metrics = [Metric(metric=name, status="error", reason=tb[:500])]
            out.append((spec, metrics))
        return out


def _loads(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        return loads_json(value)
    except ValueError:
        return None


class References:
    """Gold cases and the knowledge base, reloaded when their tables change.

    A case is validated (``GoldCase``) the first time a trace joins it, not when the table is read:
    a gold set of 10,000 cases took 0.4 s to validate and 0.35 s to pickle for each version, and
    every worker process 0.45 s to unpickle, before the first trace was evaluated. The cases travel
    (``get_state``) as the JSON they are stored as, with the normalized query each is joined by.
    They were validated by the same model when loaded; one that no longer is (a stored row edited
    by hand) is logged once and joins no trace.
    """

    def __init__(self) -> None:
        self.stamp: tuple[Any, ...] | None = None
        self._stored: dict[str, tuple[str, str]] = {}  # case id -> (normalized query, stored JSON), as read
        self._by_query: dict[str, str] = {}  # normalized query -> case id (the first row with it)
        self._cases: dict[str, GoldCase | None] = {}  # validated so far (None: invalid)
        self.kb = KnowledgeBase()

    def refresh(self, con: Tx) -> None:
        stamp = references.stamp(con)
        if stamp == self.stamp:
            return
        docs = [
            KBDocument(
                doc_id=r[0],
                version=r[1],
                valid_from=r[2],
                valid_to=r[3],
                superseded_by=r[4],
                acl=r[5],
                title=r[6],
                content=r[7],
                metadata=_loads(r[8]),
            )  # fmt: skip
            for r in references.kb_rows(con)
        ]
        cases = references.gold_rows(con)
        # store_gold fills query_norm; a row written some other way may lack it: normalized here
        self._set([(cid, qn or normalize(q), raw) for cid, qn, q, raw in cases], docs, stamp)

    def _set(
        self, cases: list[tuple[str, str, str]], docs: list[KBDocument], stamp: tuple[Any, ...] | None
    ) -> None:
        self._stored = {case_id: (query_norm, raw) for case_id, query_norm, raw in cases}
        self._by_query = {}
        self._cases = {}
        for case_id, query_norm, _ in cases:
            self._by_query.setdefault(query_norm, case_id)
        self.kb = KnowledgeBase(docs)
        self.stamp = stamp

    def get_state(self) -> tuple[Any, ...]:
        """Plain data to rebuild these references elsewhere (a worker process): ``set_state``."""
        cases = [(case_id, query_norm, raw) for case_id, (query_norm, raw) in self._stored.items()]
        return self.stamp, cases, list(self.kb.by_id.values())

    def set_state(self, state: tuple[Any, ...]) -> None:
        stamp, cases, docs = state
        self._set(cases, docs, stamp)

    @property
    def case_count(self) -> int:
        return len(self._stored)

    def case(self, case_id: str) -> GoldCase | None:
        """The gold case of this id, validated on first use (None when unknown or invalid)."""
        try:
            return self._cases[case_id]
        except KeyError:
            pass
        stored = self._stored.get(case_id)
        found: GoldCase | None = None
        if stored is not None:
            try:
                found = GoldCase.model_validate(_loads(stored[1]))
            except ValidationError as exc:
                log.warning("gold case %s as stored is not valid; no trace joins it: %s", case_id, exc)
            self._cases[case_id] = found  # only ids that exist are remembered
        return found

    def case_for(self, trace: TraceView) -> GoldCase | None:
        if trace.case_id:
            return self.case(trace.case_id)
        if trace.query_text:
            case_id = self._by_query.get(normalize(trace.query_text))
            return self.case(case_id) if case_id is not None else None
        return None


_METRIC_TYPE = frozenset({Metric})


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
    if not pa.types.is_dictionary(column.type):
        return column.to_pylist()  # type: ignore[no-any-return]
    out: list[Any] = []
    for chunk in column.chunks:
        values = chunk.dictionary.to_pylist()
        values.append(None)  # where a null index points
        indices = pc.fill_null(chunk.indices, len(values) - 1).to_pylist()
        out.extend(map(values.__getitem__, indices))
    return out


def _columns(table: pa.Table) -> list[list[Any]]:
    return [_pylist(c) for c in table.columns]


_DOC_ORDER = itemgetter(0, 1, 2)  # StepDoc's span_id, stage, position


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
            step = StepInfo(*row, citations=tuple(citations[i] or ()), is_root=bool(is_root[i]))  # type: ignore[misc]
            steps[c[0][i]].append(step)
    docs: dict[str, list[StepDoc]] = {tid: [] for tid in t[0]}
    if tables.docs.num_rows:
        c = _columns(tables.docs)
        # the same metadata text comes back for each stage a document is in: parsed once a batch
        # (StepDoc is frozen and evaluators only read it, so the parsed dicts are shared)
        parsed: dict[str, dict[str, Any] | None] = {}
        metas: list[dict[str, Any] | None] = []
        for raw in c[8]:
            if raw is None:
                metas.append(None)
                continue
            try:
                meta = parsed[raw]
            except KeyError:
                value = _loads(raw)
                meta = parsed[raw] = value if isinstance(value, dict) else None
            metas.append(meta)
        c[8] = metas
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
        views.append(
            TraceView(
                trace_id=tid,
                start_time=start,
                end_time=end,
                service_name=service,
                case_id=case_id,
                run_id=run_id,
                session_id=session,
                user_id=user,
                user_scope=tuple(scope) if scope else None,
                query_text=query,
                answer_text=answer,
                answer_span_id=answer_span,
                error_count=int(errors or 0),
                steps=tuple(steps[tid]),
                documents=tuple(docs[tid]),
            )  # fmt: skip
        )
        gens[tid] = int(gen)
    return views, gens


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


class EvalTables(NamedTuple):
    """What evaluating a batch produces, ready to write: verdict rows, eval_log rows, the
    (trace, evaluator) pairs that ran (their old rows move to history), the traces done, and the
    number of error rows per evaluator."""

    evals: pa.Table
    log: pa.Table
    ran: pa.Table
    done: pa.Table
    errors: dict[str, int]


def build_tables(runner: Runner, inputs: list[EvalInput], gens: dict[str, int], now: datetime) -> EvalTables:
    """Run the evaluators over the inputs and lay the verdicts out as the rows to write."""
    # the verdicts of the batch, laid out as columns at the end (the Metric tuples transposed in C)
    metrics: list[Metric] = []
    # per run of an evaluator over a trace that gave rows: how many, its trace and its evaluator
    # (indexes); the per-row columns of traces and evaluators are taken from these in C at the end
    run_rows: list[int] = []
    run_trace: list[int] = []
    run_spec: list[int] = []
    spec_index: dict[str, int] = {}
    specs: list[EvaluatorSpec] = []
    tids: list[str] = []
    case_ids: list[str | None] = []
    run_ids: list[str | None] = []
    trace_gens: list[int] = []
    logs: dict[str, list[Any]] = {f.name: [] for f in LOG_SCHEMA}
    tier = runner.tier
    for i, inp in enumerate(inputs):
        t = inp.trace
        tid = t.trace_id
        gen = gens[tid] + 1
        tids.append(tid)
        case_ids.append(inp.case.case_id if inp.case is not None else t.case_id)
        run_ids.append(t.run_id)
        trace_gens.append(gen)
        for spec, ms in runner.run_grouped(inp):
            if ms:
                metrics.extend(ms)
                run_rows.append(len(ms))
                run_trace.append(i)
                si = spec_index.get(spec.name)
                if si is None:
                    si = spec_index[spec.name] = len(specs)
                    specs.append(spec)
                run_spec.append(si)
        decision, reason = "evaluated", None
        if inp.case is None and t.case_id:
            decision, reason = "no_case", f"case_id {t.case_id!r} is not in gold_cases"
        logs["trace_id"].append(tid)
        logs["tier"].append(tier)
        logs["evaluator"].append(None)
        logs["decision"].append(decision)
        logs["reason"].append(reason)
        logs["generation"].append(gen)
        logs["logged_at"].append(now)
    n = len(metrics)
    if n:
        # Metric is a tuple: transposed in C, in its field order
        names, statuses, values, nums, dens, span_ids, passed, labels, reasons, details = zip(
            *metrics, strict=True
        )
    else:
        span_ids = names = values = nums = dens = statuses = reasons = passed = labels = details = ()
    dumps, opt = orjson.dumps, orjson.OPT_NON_STR_KEYS
    details_json = [dumps(d, option=opt).decode() if d is not None else None for d in details]
    # each row's run, then its trace and its evaluator
    row_run = pc.run_end_decode(
        pa.RunEndEncodedArray.from_arrays(
            pa.array(list(accumulate(run_rows)), pa.int32()), pa.array(range(len(run_rows)), pa.int32())
        )
    )
    row_trace = pa.array(run_trace, pa.int32()).take(row_run)
    row_spec = pa.array(run_spec, pa.int32()).take(row_run)
    errors: dict[str, int] = {}
    if "error" in statuses:
        for si, status in zip(row_spec.to_pylist(), statuses, strict=True):
            if status == "error":
                errors[specs[si].name] = errors.get(specs[si].name, 0) + 1
    types = {f.name: f.type for f in EVAL_SCHEMA}

    def by_trace(name: str, values: list[Any]) -> pa.Array:
        return pa.array(values, types[name]).take(row_trace)

    def by_spec(name: str, values: list[Any]) -> pa.Array:
        return pa.array(values, types[name]).take(row_spec)

    columns: dict[str, Any] = {
        "trace_id": by_trace("trace_id", tids),
        "span_id": span_ids,
        "case_id": by_trace("case_id", case_ids),
        "run_id": by_trace("run_id", run_ids),
        "evaluator": by_spec("evaluator", [spec.name for spec in specs]),
        "evaluator_version": by_spec("evaluator_version", [spec.version for spec in specs]),
        "tier": by_spec("tier", [spec.tier for spec in specs]),
        "metric": names,
        "value": values,
        "numerator": nums,
        "denominator": dens,
        "status": statuses,
        "reason": reasons,
        "passed": passed,
        "label": labels,
        "details": details_json,
        "generation": by_trace("generation", trace_gens),
        "evaluated_at": pa.repeat(pa.scalar(now, types["evaluated_at"]), n),  # one value
    }
    arrays = [c if isinstance(c, pa.Array) else pa.array(c, types[name]) for name, c in columns.items()]
    evals = pa.table(arrays, schema=EVAL_SCHEMA)
    log_tbl = pa.table([pa.array(logs[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)
    ran = pa.table(
        {
            "trace_id": pa.array([tid for tid in tids for _ in runner.specs], pa.string()),
            "evaluator": pa.array([name for _ in tids for name in runner.specs], pa.string()),
        }
    )
    done = pa.table({"trace_id": pa.array(tids, pa.string())})
    return EvalTables(evals, log_tbl, ran, done, errors)


def evaluate_tables(
    runner: Runner, refs: References, tables: TraceTables, now: datetime, source_keys: tuple[str, ...]
) -> EvalTables:
    """Fetched rows in, rows to write out: what a worker process does with a batch."""
    with gc_paused():
        # the batch's objects are released inside the call, while the collector is still paused:
        # kept alive past the pause, they would all be traversed by the collection it triggers
        return _evaluate_tables(runner, refs, tables, now, source_keys)


def _evaluate_tables(
    runner: Runner, refs: References, tables: TraceTables, now: datetime, source_keys: tuple[str, ...]
) -> EvalTables:
    views, gens = views_from_tables(tables)
    return build_tables(runner, make_inputs(refs, views, source_keys), gens, now)


def write_job(out: EvalTables, now: datetime, window: Window = None) -> Callable[[Tx], None]:
    """The write of one evaluated batch, in one transaction (``collector.store.verdicts.write_verdicts``):
    earlier verdicts of the pairs that ran move to ``evaluation_history``, the new ones go to
    ``evaluations``, decisions to ``eval_log``. ``window``: the range of the traces'
    ``first_received_at`` as fetched (``fetch_with_window``), which limits looking them up."""

    def job(con: Tx) -> None:
        verdicts.write_verdicts(con, out.evals, out.log, out.ran, out.done, now, window)

    return job


class StoreRunner:
    def __init__(
        self,
        cursor: Tx,
        write: WriteFn,
        runner: Runner,
        source_keys: tuple[str, ...] = (),
        metrics: Any = None,
    ) -> None:
        self.cursor = cursor
        self.write = write
        self.runner = runner
        self.refs = References()
        self.source_keys = source_keys
        self.metrics = metrics

    def inputs(self, trace_ids: list[str]) -> tuple[list[EvalInput], dict[str, int]]:
        inputs, gens, _ = self.load(trace_ids)
        return inputs, gens

    def load(
        self, trace_ids: list[str], hint: Window = None
    ) -> tuple[list[EvalInput], dict[str, int], Window]:
        """The inputs of these traces, their generations and the range of their
        ``first_received_at`` (``fetch_with_window``); what ``evaluate`` runs the evaluators on."""
        self.refs.refresh(self.cursor)
        tables, window = fetch_with_window(self.cursor, trace_ids, hint)
        views, gens = views_from_tables(tables)
        return make_inputs(self.refs, views, self.source_keys), gens, window

    def evaluate(
        self, trace_ids: Iterable[str], received: Mapping[str, datetime | None] | None = None
    ) -> int:
        """Evaluate these traces now; returns how many were evaluated. ``received``: their
        ``first_received_at`` as read with their ids, when the caller has it (it limits the look-ups
        in ``traces``; see ``fetch_with_window``)."""
        ids = list(dict.fromkeys(trace_ids))
        if not ids:
            return 0
        with gc_paused():
            return self._evaluate(ids, first_received_range(received, ids))

    def evaluate_many(
        self,
        trace_ids: Iterable[str],
        batch: int = 500,
        pool: EvalPool | None = None,
        on_batch: Callable[[int], None] | None = None,
        received: Mapping[str, datetime | None] | None = None,
    ) -> int:
        """Evaluate many traces in batches (one write each); returns how many were evaluated.

        Without a pool this is ``evaluate`` batch after batch. With one (``evaluators.pool``), the
        batches are evaluated in its worker processes, up to one more than there are workers in
        flight, while this process fetches the next rows and writes the finished ones in order.
        A batch whose worker fails is evaluated here from the rows already fetched.
        ``on_batch`` is called with the number of traces of each batch written. ``received`` as
        for ``evaluate``.
        """
        ids = list(dict.fromkeys(trace_ids))
        chunks = [ids[i : i + batch] for i in range(0, len(ids), batch)]
        return self.evaluate_chunks(chunks, pool, on_batch, received=received)

    def evaluate_chunks(
        self,
        chunks: Iterable[list[str]],
        pool: EvalPool | None = None,
        on_batch: Callable[[int], None] | None = None,
        on_written: Callable[[list[str]], None] | None = None,
        received: Mapping[str, datetime | None] | None = None,
    ) -> int:
        """``evaluate_many`` over batches drawn one at a time from ``chunks`` (which may be a generator
        that picks each batch when it is asked for: with a pool, that is when a worker can take it,
        so the workers need not wait for the batches before it to be written). ``on_written`` is
        called with the ids of each batch (as drawn) once its verdicts are written, in the order the
        batches were drawn."""
        total = 0
        if pool is None:
            for chunk in chunks:
                n = self.evaluate(chunk, received)
                total += n
                if on_batch is not None:
                    on_batch(n)
                if on_written is not None:
                    on_written(chunk)
            return total
        # (ids, rows, their received range, time, future or None, the pool's executor generation
        # at submission)
        pending: deque[tuple[list[str], TraceTables, Window, datetime, Future[EvalTables] | None, int]] = (
            deque()
        )

        def finish() -> None:
            nonlocal total
            chunk, tables, window, now, fut, generation = pending.popleft()
            out = None
            if fut is not None:
                try:
                    out = fut.result()
                except Exception as exc:  # the worker died or failed: this batch is evaluated here
                    log.warning(
                        "evaluation worker failed (%s); evaluating the batch in-process", type(exc).__name__
                    )
                    if isinstance(exc, BrokenProcessPool):
                        pool.broken(generation)
            if out is None:
                out = evaluate_tables(self.runner, self.refs, tables, now, self.source_keys)
            self._write(out, now, window)
            total += out.done.num_rows
            if on_batch is not None:
                on_batch(out.done.num_rows)
            if on_written is not None:
                on_written(chunk)

        for chunk in chunks:
            self.refs.refresh(self.cursor)
            ids = list(dict.fromkeys(chunk))
            tables, window = fetch_with_window(self.cursor, ids, first_received_range(received, ids))
            now = utcnow()
            fut = None
            generation = pool.generation
            if pool.usable:
                try:
                    fut = pool.submit(self.refs, tables, now)
                except BrokenProcessPool:
                    fut = None
            pending.append((chunk, tables, window, now, fut, generation))
            while len(pending) > pool.workers:
                finish()
        while pending:
            finish()
        return total

    def _evaluate(self, ids: list[str], hint: Window) -> int:
        inputs, gens, window = self.load(ids, hint)
        now = utcnow()
        out = build_tables(self.runner, inputs, gens, now)
        self._write(out, now, window)
        return len(inputs)

    def _write(self, out: EvalTables, now: datetime, window: Window = None) -> None:
        self.write(write_job(out, now, window))
        if self.metrics is not None:
            for name, n in out.errors.items():
                self.metrics.inc("ragfault_evaluator_errors_total", n, evaluator=name)
            self.metrics.inc("ragfault_traces_evaluated_total", out.done.num_rows, tier=self.runner.tier)
