"""Evaluating stored traces: ``StoreRunner`` fetches a batch's rows with a read cursor, runs the
evaluators (in this process or in worker processes, ``evaluators.service.pool``) and writes the verdicts
through a callable that runs a function on the writing connection (the writer thread in a server,
the connection itself in the CLI); the rest of the batch is written when one evaluator raises."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import TYPE_CHECKING, Any

from collector.store import verdicts
from collector.store.base import Tx
from collector.store.reader import Window, first_received_range
from collector.store.verdicts import TraceTables
from evaluators.eval_input import EvalInput
from evaluators.service.references import References
from evaluators.service.running import EvalTables, Runner, build_tables, evaluate_tables, gc_paused, utcnow
from evaluators.service.views import fetch_with_window, make_inputs, views_from_tables

if TYPE_CHECKING:
    from evaluators.service.pool import EvalPool

log = logging.getLogger("ragfault.evaluate")

WriteFn = Callable[[Callable[[Tx], Any]], Any]
OnTables = Callable[[TraceTables, EvalTables], None]  # a batch's rows as fetched, and as written


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
        inputs, gens, window, _ = self._load(trace_ids, hint)
        return inputs, gens, window

    def _load(
        self, trace_ids: list[str], hint: Window = None, prepare: bool = True
    ) -> tuple[list[EvalInput], dict[str, int], Window, TraceTables]:
        """``load``, and the rows fetched; ``prepare``: hand the inputs to ``prepare`` first."""
        self.refs.refresh(self.cursor)
        tables, window = fetch_with_window(self.cursor, trace_ids, hint)
        views, gens = views_from_tables(tables)
        inputs = make_inputs(self.refs, views, self.source_keys)
        return (self.prepare(inputs) if prepare else inputs), gens, window, tables

    def prepare(self, inputs: list[EvalInput]) -> list[EvalInput]:
        """The inputs as the evaluators get them (the judge tier's runner attaches its judge here)."""
        return inputs

    def evaluate(
        self,
        trace_ids: Iterable[str],
        received: Mapping[str, datetime | None] | None = None,
        on_tables: OnTables | None = None,
    ) -> int:
        """Evaluate these traces now; returns how many were evaluated. ``received``: their
        ``first_received_at`` as read with their ids, when the caller has it (it limits the look-ups
        in ``traces``; see ``fetch_with_window``). ``on_tables``: called with the rows fetched and the
        rows written, once they are written."""
        ids = list(dict.fromkeys(trace_ids))
        if not ids:
            return 0
        with gc_paused():
            return self._evaluate(ids, first_received_range(received, ids), on_tables)

    def evaluate_many(
        self,
        trace_ids: Iterable[str],
        batch: int = 500,
        pool: EvalPool | None = None,
        on_batch: Callable[[int], None] | None = None,
        received: Mapping[str, datetime | None] | None = None,
    ) -> int:
        """Evaluate many traces in batches (one write each); returns how many were evaluated.

        Without a pool this is ``evaluate`` batch after batch. With one (``evaluators.service.pool``), the
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
        on_tables: OnTables | None = None,
    ) -> int:
        """``evaluate_many`` over batches drawn one at a time from ``chunks`` (which may be a generator
        that picks each batch when it is asked for: with a pool, that is when a worker can take it,
        so the workers need not wait for the batches before it to be written). ``on_written`` is
        called with the ids of each batch (as drawn) once its verdicts are written, in the order the
        batches were drawn; ``on_tables`` before it, with the batch's rows fetched and written."""
        total = 0
        if pool is None:
            for chunk in chunks:
                n = self.evaluate(chunk, received, on_tables)
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
            if on_tables is not None:
                on_tables(tables, out)
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

    def _evaluate(self, ids: list[str], hint: Window, on_tables: OnTables | None = None) -> int:
        inputs, gens, window, tables = self._load(ids, hint)
        now = utcnow()
        out = build_tables(self.runner, inputs, gens, now)
        self._write(out, now, window)
        if on_tables is not None:
            on_tables(tables, out)
        return len(inputs)

    def _write(self, out: EvalTables, now: datetime, window: Window = None) -> None:
        self.write(write_job(out, now, window))
        if self.metrics is not None:
            for name, n in out.errors.items():
                self.metrics.inc("ragfault_evaluator_errors_total", n, evaluator=name)
            self.metrics.inc("ragfault_traces_evaluated_total", out.done.num_rows, tier=self.runner.tier)
