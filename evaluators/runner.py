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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson
import pyarrow as pa
from pydantic import BaseModel

from evaluators.base import EvalInput, EvaluatorSpec, KnowledgeBase, Metric, StepDoc, StepInfo, TraceView
from evaluators.gold import GoldCase, KBDocument
from evaluators.text import normalize

log = logging.getLogger("ragfault.evaluate")

WriteFn = Callable[[Callable[[duckdb.DuckDBPyConnection], Any]], Any]

EVAL_COLUMNS = (
    "trace_id", "span_id", "case_id", "run_id", "evaluator", "evaluator_version", "tier", "metric",
    "value", "numerator", "denominator", "status", "reason", "passed", "label", "details",
    "generation", "evaluated_at",
)  # fmt: skip

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

    def __init__(self, specs: dict[str, EvaluatorSpec], configs: dict[str, BaseModel], tier: str = "cheap") -> None:
        self.specs = {n: specs[n] for n in configs if specs[n].tier == tier}
        self.configs = configs
        self.tier = tier

    def run(self, inp: EvalInput) -> list[tuple[EvaluatorSpec, Metric]]:
        out: list[tuple[EvaluatorSpec, Metric]] = []
        for name, spec in self.specs.items():
            if spec.needs_case and inp.case is None:
                continue
            try:
                metrics = spec.fn(inp, self.configs[name])
            except Exception as exc:  # an evaluator bug is a verdict, never a lost batch
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                metrics = [Metric(metric=name, status="error", reason=tb[:500])]
            out.extend((spec, m) for m in metrics)
        return out


def _loads(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


class References:
    """Gold cases and the knowledge base, reloaded when their tables change."""

    def __init__(self) -> None:
        self.stamp: tuple[Any, ...] | None = None
        self.cases: dict[str, GoldCase] = {}
        self.by_query: dict[str, GoldCase] = {}
        self.kb = KnowledgeBase()

    def refresh(self, con: duckdb.DuckDBPyConnection) -> None:
        stamp = con.execute(
            "SELECT (SELECT count(*) FROM gold_cases), (SELECT max(loaded_at) FROM gold_cases), "
            "(SELECT count(*) FROM kb_documents), (SELECT max(loaded_at) FROM kb_documents)"
        ).fetchall()[0]  # fetchall: duckdb 2 keeps a fetchone() result open
        if stamp == self.stamp:
            return
        cases = {}
        for (raw,) in con.execute("SELECT raw FROM gold_cases").fetchall():
            c = GoldCase.model_validate(_loads(raw))
            cases[c.case_id] = c
        docs = []
        for r in con.execute(
            "SELECT doc_id, version, valid_from, valid_to, superseded_by, acl, title, content, metadata FROM kb_documents"
        ).fetchall():
            docs.append(
                KBDocument(
                    doc_id=r[0], version=r[1], valid_from=r[2], valid_to=r[3], superseded_by=r[4],
                    acl=r[5], title=r[6], content=r[7], metadata=_loads(r[8]),
                )  # fmt: skip
            )
        self.cases = cases
        self.by_query = {}
        for c in cases.values():
            self.by_query.setdefault(normalize(c.query), c)
        self.kb = KnowledgeBase(docs)
        self.stamp = stamp

    def case_for(self, trace: TraceView) -> GoldCase | None:
        if trace.case_id:
            return self.cases.get(trace.case_id)
        if trace.query_text:
            return self.by_query.get(normalize(trace.query_text))
        return None


_TRACE_COLS = (
    "trace_id, start_time, end_time, service_name, case_id, run_id, session_id, user_id, user_scope, "
    "query_text, answer_text, answer_span_id, error_count, coalesce(eval_generation, 0)"
)
_STEP_COLS = (
    "trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, duration_ms, status_code, model, "
    "input_tokens, output_tokens, total_tokens, query_text, input_text, output_text, tool_name, tool_arguments, "
    "tool_result, top_k, citations, is_root"
)
_DOC_COLS = "trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source"


def load_views(con: duckdb.DuckDBPyConnection, trace_ids: list[str]) -> tuple[list[TraceView], dict[str, int]]:
    """TraceViews of the given ids (missing ids are skipped) and each trace's current generation."""
    con.register("_eval_ids", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
    try:
        rows = con.execute(f"SELECT {_TRACE_COLS} FROM traces WHERE trace_id IN (SELECT trace_id FROM _eval_ids)").fetchall()
        steps: dict[str, list[StepInfo]] = {r[0]: [] for r in rows}
        for r in con.execute(
            f"SELECT {_STEP_COLS} FROM steps WHERE trace_id IN (SELECT trace_id FROM _eval_ids)"
        ).fetchall():
            # r[1:20] are StepInfo's 19 leading fields, in _STEP_COLS order
            steps[r[0]].append(StepInfo(*r[1:20], citations=tuple(r[20] or ()), is_root=bool(r[21])))  # type: ignore[misc]
        docs: dict[str, list[StepDoc]] = {r[0]: [] for r in rows}
        for r in con.execute(
            f"SELECT {_DOC_COLS} FROM step_documents WHERE trace_id IN (SELECT trace_id FROM _eval_ids) "
            "ORDER BY trace_id, span_id, stage, position"
        ).fetchall():
            meta = _loads(r[8])
            docs[r[0]].append(StepDoc(r[1], r[2], r[3], r[4], r[5], r[6], r[7], meta if isinstance(meta, dict) else None, r[9]))
    finally:
        con.unregister("_eval_ids")
    views = []
    gens = {}
    for r in rows:
        views.append(
            TraceView(
                trace_id=r[0], start_time=r[1], end_time=r[2], service_name=r[3], case_id=r[4], run_id=r[5],
                session_id=r[6], user_id=r[7], user_scope=tuple(r[8]) if r[8] else None, query_text=r[9],
                answer_text=r[10], answer_span_id=r[11], error_count=int(r[12] or 0),
                steps=tuple(steps[r[0]]), documents=tuple(docs[r[0]]),
            )  # fmt: skip
        )
        gens[r[0]] = int(r[13])
    return views, gens


class StoreRunner:
    def __init__(
        self,
        cursor: duckdb.DuckDBPyConnection,
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
        self.refs.refresh(self.cursor)
        views, gens = load_views(self.cursor, trace_ids)
        out = []
        for v in views:
            case = self.refs.case_for(v)
            as_of = case.as_of if case is not None and case.as_of else v.start_time
            out.append(EvalInput(v, case, self.refs.kb, as_of, self.source_keys))
        return out, gens

    def evaluate(self, trace_ids: Iterable[str]) -> int:
        """Evaluate these traces now; returns how many were evaluated."""
        ids = list(dict.fromkeys(trace_ids))
        if not ids:
            return 0
        with gc_paused():
            return self._evaluate(ids)

    def _evaluate(self, ids: list[str]) -> int:
        inputs, gens = self.inputs(ids)
        now = utcnow()
        rows: list[tuple[Any, ...]] = []  # one tuple per verdict, in EVAL_COLUMNS order
        add = rows.append
        dumps, opt = orjson.dumps, orjson.OPT_NON_STR_KEYS
        logs: dict[str, list[Any]] = {f.name: [] for f in LOG_SCHEMA}
        tier = self.runner.tier
        for inp in inputs:
            t = inp.trace
            tid, run_id = t.trace_id, t.run_id
            gen = gens[tid] + 1
            case_id = inp.case.case_id if inp.case is not None else t.case_id
            for spec, m in self.runner.run(inp):
                d = m.details
                add((
                    tid, m.span_id, case_id, run_id, spec.name, spec.version, spec.tier, m.metric,
                    m.value, m.numerator, m.denominator, m.status, m.reason, m.passed, m.label,
                    dumps(d, option=opt).decode() if d is not None else None, gen, now,
                ))  # fmt: skip
                if m.status == "error" and self.metrics is not None:
                    self.metrics.inc("ragfault_evaluator_errors_total", evaluator=spec.name)
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
        columns = list(zip(*rows, strict=True)) if rows else [() for _ in EVAL_SCHEMA]
        evals = pa.table([pa.array(c, f.type) for c, f in zip(columns, EVAL_SCHEMA, strict=True)], schema=EVAL_SCHEMA)
        log_tbl = pa.table([pa.array(logs[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)
        ran = pa.table(
            {
                "trace_id": pa.array([i.trace.trace_id for i in inputs for _ in self.runner.specs], pa.string()),
                "evaluator": pa.array([n for _ in inputs for n in self.runner.specs], pa.string()),
            }
        )
        done = pa.table({"trace_id": pa.array([i.trace.trace_id for i in inputs], pa.string())})

        def job(con: duckdb.DuckDBPyConnection) -> None:
            con.register("_evals", evals)
            con.register("_elog", log_tbl)
            con.register("_ran", ran)
            con.register("_done", done)
            con.execute("BEGIN TRANSACTION")
            try:
                pairs = "(trace_id, evaluator) IN (SELECT trace_id, evaluator FROM _ran)"
                con.execute(f"INSERT INTO evaluation_history SELECT * FROM evaluations WHERE {pairs}")
                con.execute(f"DELETE FROM evaluations WHERE {pairs}")
                con.execute(f"INSERT INTO evaluations ({', '.join(EVAL_COLUMNS)}) SELECT * FROM _evals")
                con.execute("INSERT INTO eval_log SELECT * FROM _elog")
                con.execute(
                    "UPDATE traces SET eval_generation = coalesce(eval_generation, 0) + 1, evaluated_at = $now, "
                    "evaluated_spans = assembled_spans WHERE trace_id IN (SELECT trace_id FROM _done)",
                    {"now": now},
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            finally:
                for n in ("_evals", "_elog", "_ran", "_done"):
                    con.unregister(n)

        self.write(job)
        if self.metrics is not None:
            self.metrics.inc("ragfault_traces_evaluated_total", len(inputs), tier=tier)
        return len(inputs)
