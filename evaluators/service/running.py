"""Running evaluators: ``Runner`` (inputs in, metric rows out, an evaluator that raises yields an
``error`` row) and laying a batch's verdicts out as the Arrow rows to write (``build_tables``);
``evaluate_tables`` is what a worker process does with a batch."""

from __future__ import annotations

import gc
import logging
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from collector.model import VERDICT
from collector.store.verdicts import TraceTables
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric
from evaluators.service.references import References
from evaluators.service.views import make_inputs, views_from_tables
from evaluators.spec import EvaluatorSpec

log = logging.getLogger("ragfault.evaluate")
EVAL_SCHEMA = VERDICT.arrow_schema()  # a verdict row as written (``collector.model``)

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


_METRIC_TYPE = frozenset({Metric})


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
    # the JSON bytes go into the string column as they are (orjson writes UTF-8): no str a row
    details_json = [dumps(d, option=opt) if d is not None else None for d in details]
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
