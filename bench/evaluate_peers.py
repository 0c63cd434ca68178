#!/usr/bin/env python
"""Cheap-tier evaluation side by side with peers: RAGAS's non-LLM metrics and ranx, on the same traces.

The traces are those of ``evaluate.py`` (four spans, 20 candidates, 5 reranked, a 3 KB prompt, a
gold case each; half English, half Chinese), built into a DuckDB file the same way. From the stored
traces, with ragfault's own loaders and untimed, every trace becomes one record holding what the
peers take as input:

- the question, the answer, the 20 candidates' texts and ids (for the quarter of the traces whose
  spans carry no ids, the registry id ragfault identified by content: work the peers are spared),
- the gold case's evidence ids (with grades) and quotes, and its required facts as the reference.

Then each system runs in a process of its own, on the same records, the first tenth untimed (warm
caches, numba compiled), the rest timed:

- **ragfault, cheap tier in memory**: ``Runner.run`` over the ``EvalInput`` of each trace, built
  before the clock starts. Every built-in evaluator of the cheap tier: IR metrics per step and per
  trace, context recall and retention, freshness, permission, duplicates, retrieval decision,
  refusal, fact coverage, lexical answer support, citations: 58 verdict rows a trace, 57 of them
  with a value on these traces (the rest not applicable).
- **ragfault, whole path**: ``StoreRunner.evaluate`` in batches of 500, as ``ragfault evaluate``
  runs it: read from DuckDB, evaluate, write the verdict rows (on a copy of the database).
- **ragfault, IR metrics alone**: the ``retrieval`` evaluator by itself (recall, hit, precision,
  nDCG at 1, 3, 5, 10 and MRR, per step and per trace).
- **ranx**: ``Qrels`` and ``Run`` built from the records, then ``ranx.evaluate`` of the same 17
  measures (``ndcg_burges`` as ragfault's nDCG) for every query at once (numba, compiled during the
  warm-up). Its relevance is by document id only: an ``any_of`` group becomes its ids, each relevant.
- **RAGAS**: six metrics that need no LLM (``IDBasedContextRecall``, ``IDBasedContextPrecision``,
  ``NonLLMContextRecall``, ``NonLLMContextPrecisionWithReference``, ``NonLLMStringSimilarity``,
  ``StringPresence``), first called one sample at a time (``await metric.single_turn_ascore``: the
  cheapest way to call them), then through ``ragas.evaluate`` on an ``EvaluationDataset`` (the
  documented way). RAGAS runs from its own virtual environment (``--ragas-venv``, created with ``pip
  install ragas==VERSION`` when missing; an older ``langchain-community`` is pinned there because
  RAGAS 0.4.3 imports a module that newer releases removed).

Printed: traces a second, microseconds a trace, values a trace, and each system's time a trace
against ragfault's cheap tier in memory. The systems do different amounts of work: the table says
what each computes. Results go to ``bench/results/evaluate_peers.json``.

Run from the project root (the first run creates the RAGAS environment, a few minutes):

    .venv/bin/python bench/evaluate_peers.py
    .venv/bin/python bench/evaluate_peers.py --traces 4000 --skip-ragas
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
RAGAS_VERSION = "0.4.3"
# RAGAS 0.4.3 imports langchain_community.chat_models.vertexai, gone from langchain-community 0.4
RAGAS_PINS = ("langchain-community<0.4", "rapidfuzz")
KS = (1, 3, 5, 10)  # the retrieval evaluator's default cut-offs
BATCH = 500


# --------------------------------------------------------------------------------------------------
# the records every system reads (built with ragfault's loaders, untimed)


def store_runner_for(local: Any, only: str | None = None) -> Any:
    """A ``StoreRunner`` over ``local`` with every built-in evaluator (or ``only`` that one) and the
    registry read, as a server holds it."""
    sys.path.insert(0, str(ROOT))
    from collector.normalize import DEFAULT_SOURCE_KEYS
    from evaluators.service.config import EvaluationSettings, evaluator_configs
    from evaluators.service.registry import discover
    from evaluators.service.runner import Runner, StoreRunner

    specs = discover()
    if only:
        specs = {only: specs[only]}
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    store_runner = StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)
    store_runner.refs.refresh(store_runner.cursor)
    return store_runner


def build(tmp: str, n_traces: int, kb_docs: int, seed: int) -> tuple[str, str]:
    """The database of ``evaluate.py``'s traces, and the records file made from it."""
    sys.path.insert(0, str(ROOT))
    from bench.evaluate import build_db, trace_ids
    from evaluators.matching import units_of

    db = os.path.join(tmp, "base.duckdb")
    local, _ = build_db(db, n_traces, kb_docs, seed)
    store_runner = store_runner_for(local)
    records = os.path.join(tmp, "records.jsonl")
    with open(records, "w", encoding="utf-8") as out:
        ids = trace_ids(local)
        for i in range(0, len(ids), BATCH):
            inputs, _ = store_runner.inputs(ids[i : i + BATCH])
            for inp in inputs:
                case = inp.case
                assert case is not None, "every bench trace has a gold case"
                cands = inp.trace.candidates
                doc_ids = [
                    inp.matching.kb_id(d) or d.doc_id or d.chunk_id or f"{d.span_id}#{d.position}"
                    for d in cands
                ]
                grades: dict[str, int] = {}
                quotes: list[str] = []
                for unit in units_of(case.evidence):
                    for e in unit.items:
                        key = e.doc_id or e.chunk_id
                        if key:
                            grades[key] = max(grades.get(key, 0), e.grade)
                        if e.quote:
                            quotes.append(e.quote)
                record = {
                    "trace_id": inp.trace.trace_id,
                    "question": inp.trace.query_text or case.query,
                    "answer": inp.trace.answer_text or "",
                    "contexts": [d.content or "" for d in cands],
                    "context_ids": doc_ids,
                    "reference_ids": grades,
                    "reference_contexts": quotes,
                    "reference": " ".join(f.text for f in case.required_facts),
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    local.close()
    return db, records


def read_records(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def split(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """The untimed warm-up (the first tenth) and the timed rest."""
    n_warm = max(1, len(items) // 10)
    return items[:n_warm], items[n_warm:]


# --------------------------------------------------------------------------------------------------
# the parts, each run in a process of its own: ``--part NAME --db DB --records FILE`` prints one JSON line


def part_ragfault(db: str, only: str | None) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from bench.evaluate import trace_ids
    from evaluators.service.runner import gc_paused
    from ragfault.local import LocalStore

    local = LocalStore(db)
    store_runner = store_runner_for(local, only)
    runner = store_runner.runner
    ids = trace_ids(local)
    inputs = []
    for i in range(0, len(ids), BATCH):
        inputs.extend(store_runner.inputs(ids[i : i + BATCH])[0])
    local.close()
    warm, timed = split(inputs)
    for inp in warm:
        runner.run(inp)
    results = []
    with gc_paused():  # as the runner evaluates a batch
        start = time.perf_counter()
        for inp in timed:
            results.append(runner.run(inp))
        elapsed = time.perf_counter() - start
    rows = sum(len(r) for r in results)
    values = sum(1 for r in results for _, m in r if m.status == "ok")
    return {"traces": len(timed), "seconds": elapsed, "values": values, "rows": rows}


def part_ragfault_whole(db: str) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from bench.evaluate import trace_ids
    from ragfault.local import LocalStore

    local = LocalStore(db)
    store_runner = store_runner_for(local)
    warm, timed = split(trace_ids(local))
    for i in range(0, len(warm), BATCH):
        store_runner.evaluate(warm[i : i + BATCH])
    count = "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM evaluations"
    rows_before, values_before = local.store.con.execute(count).fetchall()[0]
    start = time.perf_counter()
    for i in range(0, len(timed), BATCH):
        store_runner.evaluate(timed[i : i + BATCH])
    elapsed = time.perf_counter() - start
    rows, values = local.store.con.execute(count).fetchall()[0]
    local.close()
    return {
        "traces": len(timed),
        "seconds": elapsed,
        "values": values - values_before,
        "rows": rows - rows_before,
    }


RANX_METRICS = [f"{m}@{k}" for k in KS for m in ("recall", "hit_rate", "precision", "ndcg_burges")] + ["mrr"]


def part_ranx(records_path: str) -> dict[str, Any]:
    from ranx import Qrels, Run, evaluate

    def qrels_run(records: list[dict[str, Any]]) -> tuple[Any, Any]:
        qrels = Qrels({r["trace_id"]: r["reference_ids"] for r in records})
        # scores by rank: the candidates' own scores are not all recorded
        run = Run({r["trace_id"]: _ranked(r["context_ids"]) for r in records})
        return qrels, run

    warm, timed = split(read_records(records_path))
    evaluate(*qrels_run(warm), RANX_METRICS)  # compiles the numba functions
    start = time.perf_counter()
    qrels, run = qrels_run(timed)
    scores = evaluate(qrels, run, RANX_METRICS, return_mean=False)
    elapsed = time.perf_counter() - start
    values = sum(len(v) for v in scores.values())
    return {"traces": len(timed), "seconds": elapsed, "values": values}


def _ranked(ids: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for rank, doc_id in enumerate(ids):
        out.setdefault(doc_id, float(len(ids) - rank))  # a repeated id keeps its first rank
    return out


def part_ragas(records_path: str) -> dict[str, Any]:
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    warnings.filterwarnings("ignore")
    import ragas
    from ragas import EvaluationDataset
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import (
        IDBasedContextPrecision,
        IDBasedContextRecall,
        NonLLMContextPrecisionWithReference,
        NonLLMContextRecall,
        NonLLMStringSimilarity,
        StringPresence,
    )

    def sample(r: dict[str, Any]) -> Any:
        return SingleTurnSample(
            user_input=r["question"],
            response=r["answer"],
            reference=r["reference"],
            retrieved_contexts=r["contexts"],
            reference_contexts=r["reference_contexts"],
            retrieved_context_ids=r["context_ids"],
            reference_context_ids=list(r["reference_ids"]),
        )

    metrics = [
        IDBasedContextRecall(),
        IDBasedContextPrecision(),
        NonLLMContextRecall(),
        NonLLMContextPrecisionWithReference(),
        NonLLMStringSimilarity(),
        StringPresence(),
    ]
    warm, timed = split([sample(r) for r in read_records(records_path)])

    async def one_by_one(samples: list[Any]) -> int:
        n = 0
        for s in samples:
            for m in metrics:
                value = await m.single_turn_ascore(s)
                n += value == value  # not NaN (RAGAS's empty denominator)
        return n

    asyncio.run(one_by_one(warm))
    start = time.perf_counter()
    values = asyncio.run(one_by_one(timed))
    elapsed = time.perf_counter() - start

    ragas.evaluate(EvaluationDataset(samples=warm), metrics=metrics, show_progress=False)
    start = time.perf_counter()
    result = ragas.evaluate(EvaluationDataset(samples=timed), metrics=metrics, show_progress=False)
    batch_elapsed = time.perf_counter() - start
    frame = result.to_pandas()
    batch_values = int(frame[[m.name for m in metrics]].notna().to_numpy().sum())
    return {
        "traces": len(timed),
        "seconds": elapsed,
        "values": values,
        "evaluate_seconds": batch_elapsed,
        "evaluate_values": batch_values,
        "version": ragas.__version__,
    }


# --------------------------------------------------------------------------------------------------
# driving


def ragas_python(venv: Path) -> Path:
    """The RAGAS environment's interpreter, created when missing."""
    sys.path.insert(0, str(ROOT))
    from bench.ingest import peer_venv

    return peer_venv(venv, [f"ragas=={RAGAS_VERSION}", *RAGAS_PINS], "python")


def run_part(python: Path | str, part: str, db: str, records: str, only: str | None = None) -> dict[str, Any]:
    cmd = [str(python), __file__, "--part", part, "--db", db, "--records", records]
    if only:
        cmd += ["--only", only]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"part {part} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=2000)
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each part; the median is printed")
    ap.add_argument("--ragas-venv", default=str(ROOT / "bench" / ".ragas-venv"))
    ap.add_argument("--skip-ragas", action="store_true")
    ap.add_argument("--skip-ranx", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "evaluate_peers.json"))
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--records", help=argparse.SUPPRESS)
    ap.add_argument("--only", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.part:  # one measurement, in this process
        parts = {
            "ragfault": lambda: part_ragfault(args.db, args.only),
            "ragfault-whole": lambda: part_ragfault_whole(args.db),
            "ranx": lambda: part_ranx(args.records),
            "ragas": lambda: part_ragas(args.records),
        }
        print(json.dumps(parts[args.part]()))
        return 0

    rows: list[tuple[str, str, list[dict[str, Any]], str]] = []  # label, what, runs, key prefix
    with tempfile.TemporaryDirectory(prefix="ragfault-bench-peers-") as tmp:
        t = time.perf_counter()
        db, records = build(tmp, args.traces, args.kb_docs, args.seed)
        print(f"built {args.traces:,} traces and their records in {time.perf_counter() - t:.1f}s", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {}
        ragas_py = None if args.skip_ragas else ragas_python(Path(args.ragas_venv))
        for r in range(args.repeat):
            copy = os.path.join(tmp, f"whole{r}.duckdb")
            shutil.copyfile(db, copy)
            todo: list[tuple[str, Path | str, str, str | None]] = [
                ("ragfault", sys.executable, "ragfault", None),
                ("ragfault-whole", sys.executable, "ragfault-whole", None),
                ("ragfault-retrieval", sys.executable, "ragfault", "retrieval"),
            ]
            if not args.skip_ranx:
                todo.append(("ranx", sys.executable, "ranx", None))
            if ragas_py is not None:
                todo.append(("ragas", ragas_py, "ragas", None))
            for key, python, part, only in todo:
                res = run_part(python, part, copy if part == "ragfault-whole" else db, records, only)
                runs.setdefault(key, []).append(res)
                print(f"run {r + 1}: {key:<20} {res['traces'] / res['seconds']:>10,.0f} traces/s", flush=True)
            os.remove(copy)

    rows.append(("ragfault cheap tier, in memory", "11 evaluators: every layer", runs["ragfault"], ""))
    rows.append(
        (
            "ragfault cheap tier, whole path",
            "the same, read from and written to DuckDB",
            runs["ragfault-whole"],
            "",
        )
    )
    rows.append(
        ("ragfault IR metrics", "retrieval evaluator: @1,3,5,10 + MRR", runs["ragfault-retrieval"], "")
    )
    if "ranx" in runs:
        rows.append(("ranx", "the same 17 IR measures, by doc id", runs["ranx"], ""))
    if "ragas" in runs:
        rows.append(("RAGAS, single_turn_ascore", "6 non-LLM metrics", runs["ragas"], ""))
        rows.append(("RAGAS, evaluate()", "the same 6, as a dataset", runs["ragas"], "evaluate_"))

    def med(runs_: list[dict[str, Any]], prefix: str) -> tuple[float, float]:
        per_trace = statistics.median(x[f"{prefix}seconds"] / x["traces"] for x in runs_) * 1e6
        values = statistics.median(x[f"{prefix}values"] / x["traces"] for x in runs_)
        return per_trace, values

    base_us, _ = med(runs["ragfault"], "")
    print()
    print(f"median of {args.repeat} runs, {args.traces:,} traces (the first tenth untimed), one process each, "
          f"{os.cpu_count()} cores")  # fmt: skip
    head = f"{'system':<34}{'computes':<44}{'values/trace':>13}{'traces/s':>11}{'µs/trace':>10}{'× ragfault':>11}"
    print(head)
    print("-" * len(head))
    table = []
    for label, what, runs_, prefix in rows:
        us, values = med(runs_, prefix)
        print(f"{label:<34}{what:<44}{values:>13.1f}{1e6 / us:>11,.0f}{us:>10,.0f}{us / base_us:>11.2f}")
        table.append({"system": label, "computes": what, "values_per_trace": values, "us_per_trace": us,
                      "traces_per_s": 1e6 / us, "time_vs_ragfault": us / base_us})  # fmt: skip
    print("\n× ragfault: the system's time a trace over that of ragfault's cheap tier in memory.")
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "args": vars(args),
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "ragas_version": runs["ragas"][0].get("version") if "ragas" in runs else None,
                "table": table,
                "runs": runs,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
