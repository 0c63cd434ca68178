#!/usr/bin/env python
"""A month of production in one file or one lake: every UI call, bundled query and maintenance round
timed on a store of ``--traces`` traces (default 100,000: a 9-minute build on a loaded 2-core machine; the
build writes and settles ~210-550 traces a second, so 1,000,000 take 30-80 minutes).

**Build** (not timed against the goals; its own times are reported). ``--templates`` distinct traces
(default 2,000) of a realistic mix are generated as OTLP export requests and flattened once
(``collector.ingest.span_rows.flatten``, ``batch_to_arrow``): RAG traces (bench/evaluate.py's four spans, 20
candidates reranked to 5) and agent traces (an agent, two LLM calls, a tool call and a retrieval),
four services, 5 % with a gold case (two evaluation runs, ``eval-a`` and ``eval-b``, alternating),
the rest live traffic (runs ``prod-v1``/``prod-v2``), and human feedback (an OpenInference
annotation on the root span) on 4 % of the live traces, a thumbs down on three in four of those.
The templates are written with the store's own writer (``Store.write_spans``), settled, and their
knowledge base and gold cases loaded; the real cheap tier (``StoreRunner`` with two worker
processes) evaluates them. The store is then filled by copies of the templates: each copy is the
same Arrow batches with the trace ids renumbered and every time column moved by the copy's place
in the 30 days, written through ``Store.write_spans`` again and settled by the real settler
(``LocalStore.settle_all``). Evaluating a million traces is not what is measured here (and would
take hours on two cores), so each copy's verdicts are the template's rows, written again with the
copy's trace id and times: the tables the evaluation round wrote (found by their row counts, not
named) and the columns of ``traces`` it changed. The output says how many were evaluated and how
many replicated.

**The lake** (``--lake``, in an environment with the lake set: DuckDB 1.5.5 and the extension
packages): the same month on a DuckLake, a throwaway PostgreSQL catalog (``tests/pg.py``) and a
local data path, built the same way through the lake store's own paths: ``LakeStore.write_spans``,
the real settler taking the lake's settle claims, ``StoreRunner`` writing verdicts as the lake does
(``lake.work``). A lake's tables are appended, never updated in place, so the replicated verdicts are
appended too: the templates' rows of the tables evaluation wrote (``evaluation_rows``, ``trace_evals``,
...) again for every copy, in the order they were written (a trace's current row is its latest);
the columns of ``traces`` evaluation changed are those rows. The build ends with the lake's
maintenance (``collector.store.maintenance.maintain``: inlined rows flushed, small files merged,
snapshots expired and their files deleted), as a running lake's is, where the file's ends with its
facts filled and a checkpoint. Not on a lake: ``--keep`` and ``--reuse`` (its catalog lives as
long as the bench), and the live window's in-process figures (a lake's live page reads no cut
window). Disk per trace is the data path's bytes and the catalog database's, both printed, and the
templates' alone (distinct traces, data path): the copies repeat the templates' texts, which Parquet
dictionaries keep once a row group, so a full lake's bytes a trace are a floor.

**Measure**, on a real ``ragfault serve`` over that file or lake (a subprocess; memory limit 2GB):

- every UI call (bench/ui.py's list, plus the live page and a triage screen) and every bundled query
  (``queries/``, default parameters; those that need a run are given ``eval-b``/``eval-a``), each
  first on a fresh server process (cold: a new process for every call) and then ``--repeat`` times
  warm (median and worst); a call the server answers with an error is printed with it, and the
  bench goes on;
- a settle round and an evaluation round with the store full: ``--live-traces`` new traces sent over
  OTLP/HTTP until they are all settled and evaluated by the server's own loops; and
  ``POST /api/v1/evaluate`` of 400 stored traces;
- retention of a day (``POST /api/v1/export`` of the oldest day with ``delete_after``), an export of
  another day, ``ragfault compare --run eval-b --baseline eval-a`` against the server;
- disk per trace (the file after a checkpoint, the lake after its maintenance; over the raw OTLP a
  trace takes) and the server's resident memory (VmRSS and its peak VmHWM) at the end.

Each figure is printed with the 1-minute load average when it was taken.

Run from the project root:

    .venv/bin/python bench/scale.py                          # 100,000 traces
    .venv/bin/python bench/scale.py --traces 1000000 --keep scale-1m.duckdb
    .venv/bin/python bench/scale.py --reuse scale-1m.duckdb   # measure again, no build
    .venv/bin/python bench/scale.py --lake                   # 100,000 traces on a lake

Goals (issue 43): every UI call and bundled query under 300 ms warm and 1 s cold. The table is
printed and written to bench/results/scale.json (scale_lake.json; ``--out``), the servers' log beside
it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress shows as it happens

import httpx  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status  # noqa: E402

from bench.evaluate import make_kb, rag_trace  # noqa: E402
from bench.ingest import _kv, llm_attrs, ragfault_bin  # noqa: E402
from bench.storage import tree_bytes  # noqa: E402
from collector.ingest.batch import ArrowBatch  # noqa: E402
from collector.ingest.span_rows import flatten  # noqa: E402
from collector.normalize import DEFAULT_SOURCE_KEYS  # noqa: E402
from collector.store.file import facts  # noqa: E402
from collector.store.schema import batch_to_arrow  # noqa: E402
from collector.store.views import view_statement  # noqa: E402
from evaluators.service.config import EvaluationSettings, evaluator_configs  # noqa: E402
from evaluators.service.feedback import read_annotations, store_feedback  # noqa: E402
from evaluators.service.loading import store_gold, store_kb  # noqa: E402
from evaluators.service.pool import EvalPool  # noqa: E402
from evaluators.service.registry import discover  # noqa: E402
from evaluators.service.runner import Runner, StoreRunner  # noqa: E402
from evaluators.service.sampling_settings import SamplingSettings  # noqa: E402
from queries import all_queries  # noqa: E402
from ragfault.local import LocalStore  # noqa: E402

RESULTS = HERE / "results"
DAYS = 30
SERVICES = ("support-bot", "billing-assistant", "docs-search", "ops-agent")
GOLD_SHARE, AGENT_SHARE, FEEDBACK_SHARE = 0.05, 0.3, 0.04
RUNS = ("eval-a", "eval-b")
WARM_GOAL_MS, COLD_GOAL_MS = 300, 1000
PER_REQUEST = 250


# -- templates ---------------------------------------------------------------------------------------


def agent_trace(rng: random.Random, t0: int, kb: list[dict], zh: bool) -> list[Span]:
    """An agent request: AGENT root, an LLM call choosing a tool, the tool, a retrieval, the answer."""
    doc = rng.choice([d for d in kb if (d["doc_id"][-1] in "13579") == zh] or kb)
    others = rng.sample(kb, 4)
    query, answer = doc["_query"], doc["_key"]
    trace_id, ids = rng.randbytes(16), [rng.randbytes(8) for _ in range(5)]
    step = 40_000_000
    order = json.dumps({"order_id": f"A-{rng.randrange(10**6):06d}", "status": "shipped", "days": 12})

    def span(i: int, name: str, attrs: list[Any], a: int, b: int) -> Span:
        return Span(
            trace_id=trace_id, span_id=ids[i], parent_span_id=ids[0] if i else b"", name=name,
            kind=Span.SPAN_KIND_INTERNAL, start_time_unix_nano=t0 + a * step, end_time_unix_nano=t0 + b * step,
            attributes=attrs, status=Status(code=Status.STATUS_CODE_OK),
        )  # fmt: skip

    docs = []
    for k, d in enumerate([doc, *others]):
        base = f"retrieval.documents.{k}.document."
        docs += [_kv(base + "id", f"{d['doc_id']}#c0"), _kv(base + "content", d["content"]),
                 _kv(base + "score", round(0.9 - k * 0.05, 3))]  # fmt: skip
    return [
        span(0, "agent.run", [_kv("openinference.span.kind", "AGENT"), _kv("input.value", query),
                              _kv("output.value", answer), _kv("ragfault.user_scope", "support")], 0, 6),
        span(1, "plan", llm_attrs("Pick a tool for the question.", query, "lookup_order"), 0, 1),
        span(2, "lookup_order", [_kv("openinference.span.kind", "TOOL"), _kv("tool.name", "lookup_order"),
                                 _kv("input.value", '{"customer": "c-1"}'), _kv("output.value", order)], 1, 2),
        span(3, "search_policies", [_kv("openinference.span.kind", "RETRIEVER"), _kv("input.value", query),
                                    *docs], 2, 3),
        span(4, "answer", llm_attrs("Answer from the context.", f"{doc['content']}\n\n{query}", answer), 3, 6),
    ]  # fmt: skip


def _live_root(spans: list[Span], run_id: str, feedback: float | None) -> None:
    """A live trace: no gold case on the root, its run, and the user's feedback when given. Its user
    asks in words of their own (``Hi, <question>``): a gold case joins a trace by its case id or by
    the same question, and live traffic asking the registry's questions word for word would join
    the gold cases of the traces that share them (before, 40 % of the traces were evaluated as gold
    traces instead of the 5 % this bench describes)."""
    root = spans[0]
    keep = [a for a in root.attributes if a.key not in ("ragfault.case_id", "ragfault.run_id")]
    for a in keep:
        if a.key == "input.value" and a.value.string_value:
            a.value.string_value = f"Hi, {a.value.string_value}"
    del root.attributes[:]
    root.attributes.extend(keep)
    root.attributes.append(_kv("ragfault.run_id", run_id))
    if feedback is not None:
        base = "annotations.0.annotation."
        root.attributes.extend([_kv(base + "name", "user_feedback"), _kv(base + "score", feedback),
                                _kv(base + "label", "down" if feedback < 0.5 else "up"),
                                _kv(base + "annotator_kind", "HUMAN")])  # fmt: skip


def templates(
    n: int, seed: int, t0_ns: int, dt_ns: int
) -> tuple[list[ExportTraceServiceRequest], list[dict], list[dict]]:
    """Export requests holding ``n`` traces (trace ``i`` at ``t0 + i * dt``), the gold cases of the
    gold traces and the registry."""
    rng = random.Random(seed)
    kb = make_kb(rng, 400)
    cases: list[dict] = []
    by_service: dict[str, list[Span]] = {s: [] for s in SERVICES}
    requests = []
    n_gold = 0
    for i in range(n):
        t = t0_ns + i * dt_ns
        service = SERVICES[rng.randrange(len(SERVICES))]
        if rng.random() < GOLD_SHARE:
            spans, case = rag_trace(rng, t, i, kb)
            root = spans[0]
            for a in root.attributes:
                if a.key == "ragfault.run_id":
                    a.value.string_value = RUNS[n_gold % len(RUNS)]
            cases.append(case)
            n_gold += 1
        else:
            zh = rng.random() < 0.5
            spans = agent_trace(rng, t, kb, zh) if rng.random() < AGENT_SHARE else rag_trace(rng, t, i, kb)[0]
            fb = None
            if rng.random() < FEEDBACK_SHARE:
                fb = 0.0 if rng.random() < 0.75 else 1.0
            _live_root(spans, "prod-v2" if i > n // 2 else "prod-v1", fb)
        by_service[service].extend(spans)
        if (i + 1) % PER_REQUEST == 0 or i == n - 1:
            req = ExportTraceServiceRequest()
            for name, group in by_service.items():
                if group:
                    rs = req.resource_spans.add()
                    rs.resource.attributes.extend(
                        [_kv("service.name", name), _kv("deployment.environment", "prod")]
                    )
                    ss = rs.scope_spans.add()
                    ss.scope.name = "openinference.instrumentation.bench"
                    ss.spans.extend(group)
                    group.clear()
            requests.append(req)
    public = [{k: v for k, v in d.items() if not k.startswith("_")} for d in kb]
    return requests, cases, public


# -- copies through the writer ------------------------------------------------------------------------


def _time_columns(table: pa.Table) -> list[str]:
    return [f.name for f in table.schema if pa.types.is_timestamp(f.type)]


def _shift(table: pa.Table, copy: int, shift_us: int) -> pa.Table:
    """The table with its trace ids renumbered for ``copy`` and every time moved by ``shift_us``."""
    if "trace_id" in table.column_names:
        ids = table.column("trace_id")
        prefix = pa.scalar(f"{copy:08d}")  # digits: still 32 hex characters
        table = table.set_column(table.schema.get_field_index("trace_id"), "trace_id",
                                 pc.binary_join_element_wise(prefix, pc.utf8_slice_codeunits(ids, 8), ""))  # fmt: skip
    for name in _time_columns(table):
        i = table.schema.get_field_index(name)
        col = table.column(name)
        moved = pc.cast(pc.add(pc.cast(col, pa.int64()), shift_us), col.type)
        table = table.set_column(i, name, moved)
    for name in [n for n in table.column_names if n.endswith("_unix_nano")]:
        i = table.schema.get_field_index(name)
        col = table.column(name)
        table = table.set_column(
            i, name, pc.cast(pc.add(pc.cast(col, pa.int64()), shift_us * 1000), col.type)
        )
    return table


def copy_batch(batch: ArrowBatch, copy: int, shift_us: int) -> ArrowBatch:
    return ArrowBatch(
        _shift(batch.spans, copy, shift_us), _shift(batch.steps, copy, shift_us), _shift(batch.docs, copy, shift_us),
        traces=_shift(batch.trace_table(), copy, shift_us),
    )  # fmt: skip


def _trace_tables(con: Any) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.columns WHERE column_name = 'trace_id' AND table_schema = 'main' "
        "AND table_catalog = current_database() AND table_name IN (SELECT table_name FROM information_schema.tables "
        "WHERE table_type = 'BASE TABLE' AND table_catalog = current_database()) ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows]


def _counts(con: Any, tables: list[str]) -> dict[str, int]:
    return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}


def replicate_verdicts(
    con: Any, copies: int, shift_us: int, tables: list[str], trace_cols: list[str], back_us: int
) -> dict[str, int]:
    """Each copy's verdicts: the template's rows of the tables evaluation wrote, with the copy's trace
    id and times (evaluation times first moved back by ``back_us`` to just after the templates'
    traces, then by the copy's place in the month); and the ``traces`` columns evaluation set."""
    out = {}
    for t in tables:
        ts = [c for c, ty in _columns(con, t) if ty.startswith("TIMESTAMP")]
        if ts:
            con.execute(f'UPDATE "{t}" SET ' + ", ".join(f'"{c}" = "{c}" - to_microseconds($b)' for c in ts)
                        + f" WHERE {TEMPLATE}", {"b": back_us})  # fmt: skip
        # another key than the trace id (a feedback id) is made the copy's own
        keys = {k for r in con.execute("SELECT constraint_column_names FROM duckdb_constraints() WHERE table_name = $t "
                "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')", {"t": t}).fetchall() for k in r[0]} - {"trace_id"}  # fmt: skip
        own = [c for c, ty in _columns(con, t) if c in keys and ty == "VARCHAR"]
        repl = ", ".join([f"{NEW_ID} AS trace_id", *(f'x."{c}" + to_microseconds(m.c * $s) AS "{c}"' for c in ts),
                          *(f'md5(x."{c}" || {NEW_ID}) AS "{c}"' for c in own)])  # fmt: skip
        for lo in range(1, copies, 25):
            con.execute(f'INSERT INTO "{t}" SELECT x.* REPLACE ({repl}) FROM "{t}" x, range($lo, $hi) m(c) '
                        f"WHERE x.{TEMPLATE} ORDER BY m.c", {"lo": lo, "hi": min(copies, lo + 25), **({"s": shift_us} if ts else {})})  # fmt: skip
        out[t] = con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0]
    types = dict(_columns(con, "traces"))
    sets = []
    for c in trace_cols:
        if types[c].startswith("TIMESTAMP"):
            con.execute(
                f'UPDATE traces SET "{c}" = "{c}" - to_microseconds($b) WHERE {TEMPLATE}', {"b": back_us}
            )
            sets.append(
                f'"{c}" = x."{c}" + to_microseconds(CAST(substr(traces.trace_id, 1, 8) AS BIGINT) * $s)'
            )
        else:
            sets.append(f'"{c}" = x."{c}"')
    if sets:
        con.execute(f"UPDATE traces SET {', '.join(sets)} FROM traces x WHERE x.trace_id = "
                    f"'00000000' || substr(traces.trace_id, 9) AND NOT traces.{TEMPLATE}", {"s": shift_us})  # fmt: skip
    return out


def replicate_lake(
    con: Any, copies: int, shift_us: int, tables: list[str], back_us: int, keys: dict[str, set[str]]
) -> dict[str, int]:
    """``replicate_verdicts`` on a lake. A lake's tables are appended, not updated in place, and its
    views take a trace's latest row of ``trace_evals`` by row lineage (``rowid``), so the templates'
    rows are read out, deleted and appended again as copy 0 (evaluation times moved back by
    ``back_us``), then for every copy, each trace's rows in the order they were first written. The
    lake has no keys; ``keys`` (the file's, by table) names the columns made each copy's own. The
    ``traces`` columns evaluation sets are rows of ``trace_evals`` on a lake, appended here too."""
    out = {}
    for t in tables:
        cols = _columns(con, t)
        ts = [c for c, ty in cols if ty.startswith("TIMESTAMP")]
        own = [c for c, ty in cols if c in keys.get(t, set()) - {"trace_id"} and ty == "VARCHAR"]
        repl = ", ".join([f"{NEW_ID} AS trace_id",
                          *(f'x."{c}" + to_microseconds(m.c * $s - $b) AS "{c}"' for c in ts),
                          *(f'CASE WHEN m.c = 0 THEN x."{c}" ELSE md5(x."{c}" || {NEW_ID}) END AS "{c}"' for c in own)])  # fmt: skip
        con.execute(
            f'CREATE OR REPLACE TEMP TABLE _template AS SELECT *, rowid AS _row FROM "{t}" WHERE {TEMPLATE}'
        )
        con.execute(f'DELETE FROM "{t}" WHERE {TEMPLATE}')
        for lo in range(0, copies, 25):
            con.execute(f'INSERT INTO "{t}" SELECT x.* EXCLUDE (_row) REPLACE ({repl}) FROM _template x, '
                        "range($lo, $hi) m(c) ORDER BY m.c, x._row",
                        {"lo": lo, "hi": min(copies, lo + 25), **({"s": shift_us, "b": back_us} if ts else {})})  # fmt: skip
        con.execute("DROP TABLE _template")
        out[t] = con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0]
    return out


def file_keys() -> dict[str, set[str]]:
    """The primary key and unique columns of each table of the single file (its migrations run on an
    empty database): a lake's tables have the file's columns but no keys."""
    import duckdb

    from collector.store.schema import migrate

    ref = duckdb.connect(":memory:")
    try:
        migrate(ref)
        rows = ref.execute("SELECT table_name, constraint_column_names FROM duckdb_constraints() "
                           "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')").fetchall()  # fmt: skip
    finally:
        ref.close()
    out: dict[str, set[str]] = {}
    for table, columns in rows:
        out.setdefault(str(table), set()).update(columns)
    return out


TEMPLATE = "trace_id LIKE '00000000%'"
NEW_ID = "printf('%08d', m.c) || substr(x.trace_id, 9)"


def _columns(con: Any, table: str) -> list[tuple[str, str]]:
    return [tuple(r) for r in con.execute(  # type: ignore[misc]
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $t AND table_schema = 'main' "
        "AND table_catalog = current_database() ORDER BY ordinal_position", {"t": table}).fetchall()]  # fmt: skip


class LakeLocal:
    """A lake opened read-write by this process (``LakeStore``), with ``LocalStore``'s surface as the
    build uses it: ``store``, ``write`` (on one writing cursor, as a server's writer lane),
    ``settle_all`` (the real settler, taking the lake's settle claims) and ``close``. A settle or
    evaluation round claims up to 2,000 traces (a server's default is 500, to spread a backlog over
    collectors; here there is one)."""

    def __init__(self, catalog: str, data_path: str) -> None:
        from collector.store.lake.store import LakeStore

        self.store = LakeStore(catalog, data_path, extension_repository=False, claim_max_traces=2000)
        self.con = self.store.cursor()

    def write(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self.con)

    def settle_all(self) -> int:
        from collector.settling.settle import Settler

        settler = Settler(self.store.cursor(), self.write, settle_seconds=1, max_wait_seconds=1)
        total = 0
        while n := settler.run_once(force=True):
            total += n
        return total

    def close(self) -> None:
        self.con.close()
        self.store.close()


def evaluate_templates(local: LocalStore | LakeLocal, workers: int) -> int:
    """The real cheap tier over every stored trace (the templates), as ``ragfault evaluate`` runs it."""
    specs = discover()
    runner = StoreRunner(local.store.cursor(), local.write, Runner(specs, evaluator_configs(EvaluationSettings(), specs)),
                         DEFAULT_SOURCE_KEYS)  # fmt: skip
    runner.refs.refresh(runner.cursor)
    ids = [r[0] for r in local.store.cursor().execute(
        "SELECT trace_id FROM traces WHERE settled_at IS NOT NULL ORDER BY trace_id").fetchall()]  # fmt: skip
    # feedback carried by the spans, read as the server's scheduler does before a batch is evaluated
    rows = read_annotations(runner.cursor, ids, SamplingSettings())
    local.write(lambda con: store_feedback(con, rows))
    if workers:
        with EvalPool(workers, runner.runner, DEFAULT_SOURCE_KEYS) as pool:
            pool.start()
            runner.evaluate_many(ids, 500, pool)
    else:
        for i in range(0, len(ids), 500):
            runner.evaluate(ids[i : i + 500])
    return len(ids)


def build(target: str | tuple[str, str], n: int, n_templates: int, seed: int, workers: int) -> dict[str, Any]:
    """The store (``target``: the file's path, or a lake's catalog and data path): templates written,
    settled and evaluated; copies written and settled; verdicts replicated. A file ends with its facts
    filled and a checkpoint; a lake (which keeps no facts) with its maintenance (duplicates, inlined
    rows flushed, small files merged, snapshots expired and their files deleted)."""
    from collector.store.maintenance import maintain

    n_templates = min(n_templates, n)
    copies = max(1, n // n_templates)
    dt_ns = DAYS * 86400 * 10**9 // (copies * n_templates)
    end = datetime.utcnow().replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    t0_ns = int((end - timedelta(days=DAYS) - datetime(1970, 1, 1)).total_seconds()) * 10**9
    info: dict[str, Any] = {"templates": n_templates, "copies": copies}
    t = time.perf_counter()
    requests, cases, kb = templates(n_templates, seed, t0_ns, dt_ns)
    info["otlp_bytes_per_trace"] = sum(r.ByteSize() for r in requests) / n_templates
    batches = []
    for k, req in enumerate(requests):
        last_ns = t0_ns + min((k + 1) * PER_REQUEST, n_templates) * dt_ns
        received = datetime(1970, 1, 1) + timedelta(microseconds=last_ns // 1000 + 2_000_000)
        batches.append(batch_to_arrow(flatten(req, received_at=received, source_keys=DEFAULT_SOURCE_KEYS)))
    info["generate_s"] = time.perf_counter() - t
    local = LakeLocal(*target) if not isinstance(target, str) else LocalStore(target)
    try:
        con = local.con if isinstance(local, LakeLocal) else local.store.con
        t = time.perf_counter()
        for b in batches:
            local.store.write_spans(con, copy_batch(b, 0, 0))
        local.settle_all()
        store_kb(local.write, "\n".join(json.dumps(d, ensure_ascii=False) for d in kb))
        store_gold(local.write, "\n".join(json.dumps(c, ensure_ascii=False) for c in cases), dataset="bench")
        tables = [x for x in _trace_tables(con) if x != "traces"]
        before = _counts(con, tables)
        con.execute("CREATE TEMP TABLE _before AS SELECT * FROM traces")
        info["templates_written_s"] = time.perf_counter() - t
        t = time.perf_counter()
        info["evaluated_traces"] = evaluate_templates(local, workers)
        info["evaluate_s"] = time.perf_counter() - t
        info["evaluated_per_s"] = info["evaluated_traces"] / info["evaluate_s"]
        after = _counts(con, tables)
        verdict_tables = [x for x in tables if after[x] > before[x]]
        trace_cols = [c for c, _ in _columns(con, "traces") if c != "trace_id" and con.execute(
            f'SELECT count(*) FROM traces t JOIN _before b USING (trace_id) WHERE t."{c}" IS DISTINCT FROM b."{c}"'
        ).fetchall()[0][0]]  # fmt: skip
        con.execute("DROP TABLE _before")
        info["verdict_tables"], info["verdict_trace_columns"] = verdict_tables, trace_cols
        evaluated_at = con.execute("SELECT max(evaluated_at) FROM evaluations").fetchall()[0][0]
        if isinstance(local, LakeLocal):
            # the bytes a trace of the templates alone, distinct traces: the copies repeat their texts,
            # which the lake's Parquet dictionaries keep once a row group, so its bytes a trace when full
            # are a floor (a file's are not measured here: its fixed blocks weigh on so few traces)
            maintain(local.store, 0)
            size = tree_bytes(Path(local.store.data_path))
            info["templates_bytes_per_trace"] = size / n_templates
        t = time.perf_counter()
        shift_us = n_templates * dt_ns // 1000
        settle_s = 0.0
        for c in range(1, copies):
            for b in batches:
                local.store.write_spans(con, copy_batch(b, c, c * shift_us))
            if c % 50 == 0 or c == copies - 1:
                t_settle = time.perf_counter()
                local.settle_all()
                settle_s += time.perf_counter() - t_settle
                print(f"  {(c + 1) * n_templates:,} traces written and settled ({time.perf_counter() - t:.0f} s, "
                      f"{settle_s:.0f} s of it settling; load {os.getloadavg()[0]:.1f})")  # fmt: skip
            elif c % 10 == 0:
                print(f"  {(c + 1) * n_templates:,} traces written ({time.perf_counter() - t:.0f} s)")
        info["copies_written_s"] = time.perf_counter() - t
        info["copies_settled_s"] = settle_s
        t = time.perf_counter()
        templates_end = datetime(1970, 1, 1) + timedelta(microseconds=(t0_ns + n_templates * dt_ns) // 1000)
        back_us = int((evaluated_at - templates_end).total_seconds() * 1e6) - 30_000_000
        if isinstance(local, LakeLocal):
            info["verdict_rows"] = replicate_lake(con, copies, shift_us, verdict_tables, back_us, file_keys())
        else:
            info["verdict_rows"] = replicate_verdicts(
                con, copies, shift_us, verdict_tables, trace_cols, back_us
            )
        info["verdicts_replicated_s"] = time.perf_counter() - t
        if isinstance(local, LakeLocal):
            t = time.perf_counter()
            info["maintenance"] = maintain(local.store, 0)
            info["maintenance_s"] = time.perf_counter() - t
            info["traces"] = con.execute("SELECT count(*) FROM traces").fetchall()[0][0]
            return info
        # facts the evaluation round rewrote without adding rows (a settled trace's health signals, first
        # written as it settled) were not replicated: computed in full over the replicated verdicts, as a
        # store migrated with verdicts computes them when it opens
        t = time.perf_counter()
        for table in [f.name for f in facts.FACTS if f.name not in verdict_tables]:
            con.execute("INSERT INTO facts_pending VALUES ($n) ON CONFLICT DO NOTHING", {"n": table})
        info["facts_filled"] = facts.fill_pending(con)
        info["facts_filled_s"] = time.perf_counter() - t
        t = time.perf_counter()
        con.execute("CHECKPOINT")
        info["checkpoint_s"] = time.perf_counter() - t
        info["traces"] = con.execute("SELECT count(*) FROM traces").fetchall()[0][0]
    finally:
        local.close()
    return info


# -- measuring on a real server -----------------------------------------------------------------------


def file_store(db: str) -> list[str]:
    """``ragfault serve``'s options for the file ``db``."""
    return ["--db", db]


def lake_store(catalog: str, data_path: str) -> list[str]:
    """``ragfault serve``'s options for a lake."""
    return ["--store", "ducklake", "--catalog", catalog, "--data-path", data_path]


class Server:
    """``ragfault serve`` on the store (``store``: its options, ``file_store`` or ``lake_store``), a
    process of its own (started and stopped by the bench). A lake's extensions are loaded from the
    installed packages (no network)."""

    def __init__(self, store: list[str], work: Path) -> None:
        from bench.ingest import free_ports, wait_http

        self.port, grpc_port = free_ports(2)
        cfg = work / "scale.toml"
        cfg.write_text(f'[server]\nmemory_limit = "2GB"\n[retention]\nexport_dir = "{work / "export"}"\n')
        cmd = [*ragfault_bin(), "serve", *store, "--http-port", str(self.port), "--grpc-port",
               str(grpc_port), "--config", str(cfg)]  # fmt: skip
        self.log = work / "server.log"
        env = {**os.environ, "RAGFAULT_EXTENSION_REPOSITORY": "false"}
        self.proc = subprocess.Popen(
            cmd, stdout=self.log.open("a"), stderr=subprocess.STDOUT, cwd=work, env=env
        )
        self.url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{self.url}/healthz", self.proc, 300, self.log)
        self.http = httpx.Client(base_url=self.url, timeout=600)

    def memory_kb(self) -> dict[str, int]:
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
        return out

    def stop(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


TIMED_OUT = float("inf")  # a call the server stopped at its SQL time limit (408)
SLOW_MS = 10_000  # a call this slow is called warm once, not ``--repeat`` times


def call(http: httpx.Client, req: tuple[str, str, Any]) -> float:
    """One call's wall time (ms); a 202 (facts being computed) is asked again until the data comes;
    ``TIMED_OUT`` when the server stopped it at its SQL time limit (the figure is then "over the
    limit", not a crash of the bench)."""
    method, path, body = req
    t = time.perf_counter()
    while True:
        r = http.post(path, json=body) if method == "POST" else http.get(path)
        if r.status_code != 202:
            break
        time.sleep(0.05)
    if r.status_code == 408:
        return TIMED_OUT
    _answered(r)
    return (time.perf_counter() - t) * 1000


def _answered(r: httpx.Response) -> httpx.Response:
    """``r`` when the server answered it; a RuntimeError naming the call, the status and the start of
    the body otherwise (the bench records it and goes on)."""
    if r.status_code >= 400:
        raise RuntimeError(
            f"{r.request.method} {r.request.url.raw_path.decode()}: {r.status_code} {r.text[:300]}"
        )
    return r


def calls_of(http: httpx.Client) -> dict[str, tuple[str, str, Any]]:
    """Every UI call (bench/ui.py's list, the live page, a triage screen) and bundled query."""
    n = http.post("/api/v1/sql", json={"sql": "SELECT count(*) FROM traces"}).json()["rows"][0][0]
    tid = http.get(f"/api/v1/ui/traces?limit=1&offset={n // 2}").json()["rows"][0]["trace_id"]
    live = http.post("/api/v1/sql", json={"sql": "SELECT trace_id FROM traces WHERE case_id IS NULL "
                     "AND evaluated_at IS NOT NULL ORDER BY start_time DESC LIMIT 1"}).json()["rows"][0][0]  # fmt: skip
    get = {
        "ui overview": "/api/v1/ui/overview",
        "ui traces, first page": "/api/v1/ui/traces?limit=50",
        "ui traces, last page": f"/api/v1/ui/traces?limit=50&offset={n - 50}",
        "ui traces, text search": "/api/v1/ui/traces?limit=50&q=refund",
        "ui dashboard": "/api/v1/ui/dashboard",
        "ui dashboard by hour": "/api/v1/ui/dashboard?bucket=hour",
        "ui traces, one root cause": "/api/v1/ui/traces?limit=50&root_cause=unsupported_claims",
        "ui cases, first page": "/api/v1/ui/cases?limit=25",
        "ui cases, last page": f"/api/v1/ui/cases?limit=25&sort=case_id&offset={max(0, n // 20 - 25)}",
        "ui trace view": f"/api/v1/traces/{tid}/view",
        "ui live page": "/api/v1/ui/live",
        "ui triage screen": f"/api/v1/ui/triage/item?trace_id={live}",
        "ui doctor (coverage of the last day)": "/api/v1/coverage",
    }
    out: dict[str, tuple[str, str, Any]] = {k: ("GET", v, None) for k, v in get.items()}
    runs = {"run": "eval-b", "baseline": "eval-a", "run_id": "eval-b", "case_id": "case-000001"}
    for name, q in sorted(all_queries().items()):
        params = {p: runs[p] for p in q.params if p in runs}
        text = view_statement(q.view) if q.view else q.sql  # as `ragfault query NAME` runs it
        out[f"query {name}"] = ("POST", "/api/v1/sql", {"sql": text, "params": q.bind(params)})
    return out


def measure(store: list[str], work: Path, repeat: int, live_traces: int, seed: int) -> dict[str, Any]:
    """Every call cold and warm, then the rounds, each on servers of its own. A call the server
    answers with an error is recorded with the error (the bench goes on), as is a round that fails."""
    res: dict[str, Any] = {"calls": {}}
    first = Server(store, work)
    try:
        calls = calls_of(first.http)
    finally:
        first.stop()
    for label, req in calls.items():  # cold: a fresh server process for every call
        srv = Server(store, work)
        try:
            cold = call(srv.http, req)
            warm = [call(srv.http, req)]
            warm += [call(srv.http, req) for _ in range(repeat - 1) if warm[0] < SLOW_MS]
        except (RuntimeError, httpx.HTTPError) as exc:
            res["calls"][label] = {"error": str(exc)[:600], "load": os.getloadavg()[0]}
            print(f"  {label:<36} failed: {str(exc)[:200]}")
            continue
        finally:
            srv.stop()
        r = res["calls"][label] = {"cold_ms": cold, "median_ms": statistics.median(warm), "max_ms": max(warm),
                                   "load": os.getloadavg()[0]}  # fmt: skip
        print(
            f"  {label:<36}{_ms(r['cold_ms']):>9}{_ms(r['median_ms']):>9}{_ms(r['max_ms']):>9}{r['load']:>6.1f}"
        )
    srv = Server(store, work)
    try:
        res["rounds"] = rounds(srv, work, live_traces, seed)
        res["memory_kb"] = srv.memory_kb()
    finally:
        srv.stop()
    return res


def _sql(http: httpx.Client, text: str, params: dict[str, Any] | None = None) -> list[Any]:
    r = _answered(http.post("/api/v1/sql", json={"sql": text, "params": params or {}}))
    return list(r.json()["rows"])


def _gauge(http: httpx.Client, name: str) -> float | None:
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def _step(out: dict[str, Any], label: str, fn: Callable[[], None]) -> None:
    """One part of the rounds; a failure is recorded under ``errors`` with the load average, and the
    next part runs."""
    try:
        fn()
    except Exception as exc:  # (what the server answered, or the bench's own check)
        out.setdefault("errors", {})[label] = f"{type(exc).__name__}: {str(exc)[:600]}"
        print(f"  {label} failed: {str(exc)[:300]}")
    out.setdefault("load", {})[label] = os.getloadavg()[0]


def rounds(srv: Server, work: Path, n_live: int, seed: int) -> dict[str, Any]:
    """The maintenance work with the store full: new traffic settled and evaluated by the server's own
    loops, traces evaluated again, a day exported, a day deleted by retention, ``compare``."""
    http = srv.http
    out: dict[str, Any] = {}

    def live() -> None:
        now_ns = time.time_ns()
        requests, _, _ = templates(n_live, seed + 1, now_ns - n_live * 10_000_000, 10_000_000)
        since = _sql(http, "SELECT CAST(now() AS TIMESTAMP) - INTERVAL 1 SECOND")[0][0]
        t = time.perf_counter()
        for req in requests:
            http.post("/v1/traces", content=req.SerializeToString(),
                      headers={"content-type": "application/x-protobuf"}).raise_for_status()  # fmt: skip
        out["live_sent_s"] = time.perf_counter() - t
        settled_s = None
        while time.perf_counter() - t < 900:
            n, settled, evaluated = _sql(http, "SELECT count(*), count(settled_at), count(*) FILTER (WHERE "
                                         "evaluated_at IS NOT NULL) FROM traces WHERE first_received_at >= "
                                         "CAST($s AS TIMESTAMP)", {"s": since})[0]  # fmt: skip
            if settled_s is None and n >= n_live and settled >= n_live:
                settled_s = time.perf_counter() - t
            if settled_s is not None and evaluated >= n_live:
                break
            time.sleep(0.2)
        out["live_traces"] = n_live
        out["live_settled_s"] = settled_s
        out["live_settled_and_evaluated_s"] = time.perf_counter() - t
        out["live_found"] = {"traces": n, "settled": settled, "evaluated": evaluated}

    def again() -> None:
        n = _sql(http, "SELECT count(*) FROM traces")[0][0]
        ids = [r[0] for r in _sql(http, "SELECT trace_id FROM traces WHERE evaluated_at IS NOT NULL "
                                  "ORDER BY start_time LIMIT 200 OFFSET $o", {"o": n // 2})]  # fmt: skip
        ids += [r[0] for r in _sql(http, "SELECT trace_id FROM traces WHERE evaluated_at IS NOT NULL "
                                   "ORDER BY start_time LIMIT 200 OFFSET $o", {"o": n // 10})]  # fmt: skip
        t = time.perf_counter()
        _answered(http.post("/api/v1/evaluate", json={"trace_ids": ids}))
        out["evaluate_400_stored_s"] = time.perf_counter() - t

    def gauges() -> None:
        out["live_gauges_refresh_s"] = _gauge(http, "ragfault_live_gauges_refresh_seconds")

    _step(out, "live traffic", live)
    _step(out, "evaluate 400 stored", again)
    _step(out, "live gauges", gauges)
    first_day: list[Any] = []
    _step(
        out,
        "first day",
        lambda: first_day.extend(_sql(http, "SELECT CAST(min(start_time) AS DATE) FROM traces")[0]),
    )
    for label, days, delete in (("export_a_day", 2, False), ("retention_a_day", 0, True)):  # fmt: skip

        def export(label: str = label, days: int = days, delete: bool = delete) -> None:
            start = datetime.fromisoformat(str(first_day[0])) + timedelta(days=days)
            body = {"out_dir": label, "since": start.isoformat(), "until": (start + timedelta(days=1)).isoformat(),
                    "delete_after": delete}  # fmt: skip
            t = time.perf_counter()
            r = _answered(http.post("/api/v1/export", json=body))
            out[label] = {"s": time.perf_counter() - t, "result": r.json()}

        if first_day:
            _step(out, label, export)

    def compare() -> None:
        t = time.perf_counter()
        cmp = subprocess.run([*ragfault_bin(), "compare", "--run", "eval-b", "--baseline", "eval-a", "--server",
                              srv.url, "--format", "json"], capture_output=True, text=True, cwd=work)  # fmt: skip
        out["compare_s"] = time.perf_counter() - t
        out["compare_ok"] = cmp.returncode == 0
        if cmp.returncode:
            out["compare_error"] = (cmp.stderr or cmp.stdout)[-500:]

    _step(out, "compare", compare)
    return out


def live_cut(db: str, repeat: int) -> dict[str, Any]:
    """The live page and the live gauges in this process on the file, with their reads cut to the
    window (``collector.store.live_window``) and without (every verdict read, as before the cut): the
    same code otherwise; warm medians (ms) after a first call each."""
    from contextlib import nullcontext

    import ragfault.ui.live as live
    from collector.store.live_window import Cut

    local = LocalStore(db)
    out: dict[str, Any] = {}
    try:
        con = local.store.cursor()
        now = datetime.fromisoformat(str(_one(con, "SELECT max(start_time) FROM traces")))
        real = live.window_reads
        for label, cut in (("whole store", lambda c, s: nullcontext(Cut(False))), ("window", real)):
            live.window_reads = cut  # type: ignore[assignment]
            try:
                for name, fn in (("live page", lambda: live.live_page(con, None, None, None)),
                                 ("live gauges", lambda: live.gauge_values(con, now))):  # fmt: skip
                    times = []
                    for _ in range(repeat + 1):
                        t = time.perf_counter()
                        fn()
                        times.append((time.perf_counter() - t) * 1000)
                    out[f"{name}, {label}"] = {
                        "first_ms": times[0],
                        "median_ms": statistics.median(times[1:]),
                    }
            finally:
                live.window_reads = real
    finally:
        local.close()
    return out


def _one(con: Any, text: str) -> Any:
    return con.execute(text).fetchall()[0][0]


def disk(db: str) -> int:
    return sum(os.path.getsize(p) for p in (db, db + ".wal") if os.path.exists(p))


def lake_disk(pg: Any, database: str, data_path: Path) -> dict[str, int]:
    """A lake's bytes: its data path's files and its catalog's PostgreSQL database (and, for scale, an
    empty database of the same cluster: what PostgreSQL takes before the catalog holds anything)."""
    files = tree_bytes(data_path)
    catalog = int(pg.query(database, "SELECT pg_database_size(current_database())").strip())
    empty = int(pg.query("postgres", "SELECT pg_database_size('template1')").strip())
    return {"data_path": files, "catalog": catalog, "total": files + catalog, "empty_database": empty}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--templates", type=int, default=2000, help="distinct traces generated and evaluated")
    ap.add_argument("--workers", type=int, default=2, help="evaluation worker processes for the templates")
    ap.add_argument("--repeat", type=int, default=5, help="warm calls after the cold one")
    ap.add_argument("--live-traces", type=int, default=1000, help="new traces of the settle/evaluation round")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--lake", action="store_true", help="a lake (a throwaway PostgreSQL catalog) instead of the file"
    )
    ap.add_argument(
        "--keep", help="keep a copy of the built store here (before it is measured; the file only)"
    )
    ap.add_argument("--reuse", help="measure a copy of this store instead of building one (the file only)")
    ap.add_argument("--out", default=None, help="default: bench/results/scale.json (scale_lake.json)")
    args = ap.parse_args()
    if args.lake and (args.keep or args.reuse):
        ap.error("--keep and --reuse are the file's: a lake's catalog is a throwaway PostgreSQL cluster, "
                 "removed when the bench ends")  # fmt: skip
    out = Path(args.out or RESULTS / ("scale_lake.json" if args.lake else "scale.json"))
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ragfault-bench-scale-") as tmp:
        work = Path(tmp)
        try:
            size: int | dict[str, int]
            res, built, size = run_lake(args, work) if args.lake else run_file(args, work)
        finally:  # the servers' log, beside the results
            if (work / "server.log").exists():
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(work / "server.log", out.with_suffix(".server.log"))
    res["store"] = "lake" if args.lake else "file"
    res["build"] = built
    if "traces" in built:  # a reused store without the build's record (PATH.json): no ratio to print
        res["disk_bytes"] = size
        total = size["total"] if isinstance(size, dict) else size
        res["disk_bytes_per_trace"] = total / built["traces"]
        res["disk_over_otlp"] = res["disk_bytes_per_trace"] / built["otlp_bytes_per_trace"]
    else:
        print(f"no {args.reuse}.json beside the store: disk a trace not computed", file=sys.stderr)
    res["load_average"] = {"start": load_start, "end": os.getloadavg()}
    res["cores"] = os.cpu_count()
    print_table(res)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1, default=str))
    return 0


def _built(built: dict[str, Any], t: float) -> dict[str, Any]:
    built["build_s"] = time.perf_counter() - t
    built["load_average_after_build"] = os.getloadavg()
    print(f"built {built['traces']:,} traces in {built['build_s']:.0f} s (load {os.getloadavg()[0]:.1f}): "
          f"{built['evaluated_traces']:,} evaluated by the cheap tier, the verdicts of the other "
          f"{built['traces'] - built['evaluated_traces']:,} replicated from theirs")  # fmt: skip
    copies = built["traces"] - built["templates"]
    if copies > 0 and built["copies_settled_s"] > 0:
        print(f"  copies written {copies / (built['copies_written_s'] - built['copies_settled_s']):,.0f} traces/s, "
              f"settled {copies / built['copies_settled_s']:,.0f} traces/s; templates evaluated "
              f"{built['evaluated_per_s']:,.0f} traces/s")  # fmt: skip
    return built


def run_file(args: argparse.Namespace, work: Path) -> tuple[dict[str, Any], dict[str, Any], int]:
    """The file: built (or ``--reuse``d), measured on a server, the live window in this process."""
    db = str(work / "scale.duckdb")
    built: dict[str, Any] = {}
    if args.reuse:
        shutil.copy(args.reuse, db)
        built = (
            json.loads(Path(args.reuse + ".json").read_text()) if Path(args.reuse + ".json").exists() else {}
        )
    else:
        t = time.perf_counter()
        built = _built(build(db, args.traces, args.templates, args.seed, args.workers), t)
        if args.keep:
            shutil.copy(db, args.keep)
            Path(args.keep + ".json").write_text(json.dumps(built, default=str))
    size = disk(db)
    print(f"{'call':<38}{'cold ms':>9}{'warm ms':>9}{'max ms':>9}{'load':>6}")
    res = measure(file_store(db), work, args.repeat, args.live_traces, args.seed)
    res["live_cut"] = live_cut(db, args.repeat)
    return res, built, size


def run_lake(args: argparse.Namespace, work: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """A lake on a throwaway PostgreSQL cluster (``tests/pg.py``): built, measured on a server. The
    live window's cut is not measured: on a lake it reads as before (``collector.store.live_window``)."""
    from tests.pg import postgres_cluster

    with postgres_cluster() as pg:
        catalog, data = pg.create_database("scale"), work / "lake-data"
        t = time.perf_counter()
        built = _built(build((catalog, str(data)), args.traces, args.templates, args.seed, args.workers), t)
        size = lake_disk(pg, "scale", data)
        print(f"{'call':<38}{'cold ms':>9}{'warm ms':>9}{'max ms':>9}{'load':>6}")
        res = measure(lake_store(catalog, str(data)), work, args.repeat, args.live_traces, args.seed)
        res["disk_after_measuring"] = lake_disk(pg, "scale", data)
    res["live_cut"] = {}
    res["live_cut_note"] = (
        "not measured on a lake: its live page reads no cut window (collector.store.live_window)"
    )
    return res, built, size


def _ms(x: float) -> str:
    return "timeout" if x == TIMED_OUT else f"{x:.0f}"


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def print_table(res: dict[str, Any]) -> None:
    b = res["build"]
    store = res.get("store", "file")
    if "traces" in b:
        print(f"\n{store}: {b['traces']:,} traces ({b['evaluated_traces']:,} evaluated by the cheap tier, verdicts of "
              f"the rest replicated); built in {b.get('build_s', 0):.0f} s")  # fmt: skip
    print(f"{os.cpu_count()} cores; load average at start/end "
          f"{res['load_average']['start'][0]:.1f}/{res['load_average']['end'][0]:.1f}")  # fmt: skip
    print("| call | cold ms | warm median ms | warm max ms | load |\n|---|--:|--:|--:|--:|")
    for label, r in res["calls"].items():
        if "error" in r:
            print(f"| {label} **failed** | {r['error'][:120]} | | | {r['load']:.1f} |")
            continue
        flag = " **over**" if r["median_ms"] > WARM_GOAL_MS or r["cold_ms"] > COLD_GOAL_MS else ""
        print(
            f"| {label}{flag} | {_ms(r['cold_ms'])} | {_ms(r['median_ms'])} | {_ms(r['max_ms'])} | {r['load']:.1f} |"
        )
    r = res["rounds"]
    load = r.get("load", {})
    if "live_traces" in r:
        print(f"\n{r['live_traces']:,} new traces over OTLP/HTTP: settled in {_s(r['live_settled_s'])} s, settled and "
              f"evaluated in {_s(r['live_settled_and_evaluated_s'])} s (load {load.get('live traffic', 0):.1f})")  # fmt: skip
    if "evaluate_400_stored_s" in r:
        print(f"400 stored traces evaluated again in {r['evaluate_400_stored_s']:.1f} s "
              f"(load {load.get('evaluate 400 stored', 0):.1f})")  # fmt: skip
    print(f"live gauges refresh {r.get('live_gauges_refresh_s')} s")
    for k in ("export_a_day", "retention_a_day"):
        if k in r:
            print(f"{k.replace('_', ' ')}: {r[k]['s']:.1f} s (load {load.get(k, 0):.1f}; "
                  f"{json.dumps(r[k]['result'])[:160]})")  # fmt: skip
    if "compare_s" in r:
        print(
            f"compare eval-b / eval-a: {r['compare_s']:.1f} s (ok: {r['compare_ok']}; load {load.get('compare', 0):.1f})"
        )
    for label, error in r.get("errors", {}).items():
        print(f"{label}: failed: {error[:300]}")
    for label, x in res["live_cut"].items():
        print(f"in process, {label}: first {x['first_ms']:.0f} ms, warm median {x['median_ms']:.0f} ms")
    if "live_cut_note" in res:
        print(f"live window in process: {res['live_cut_note']}")
    if "disk_bytes_per_trace" in res:
        parts = res["disk_bytes"]
        detail = (f" (data path {parts['data_path'] / 2**20:.1f} MB + catalog {parts['catalog'] / 2**20:.1f} MB, of "
                  f"which an empty database takes {parts['empty_database'] / 2**20:.1f} MB)"
                  if isinstance(parts, dict) else "")  # fmt: skip
        print(f"disk {res['disk_bytes_per_trace'] / 1024:.1f} KB a trace{detail} = {res['disk_over_otlp']:.2f} x the "
              f"raw OTLP ({b['otlp_bytes_per_trace'] / 1024:.1f} KB)")  # fmt: skip
    if "templates_bytes_per_trace" in b:
        print(f"the {b['templates']:,} templates alone (distinct traces): {b['templates_bytes_per_trace'] / 1024:.1f} KB "
              "a trace (data path only); the copies repeat their texts, which Parquet dictionaries keep once a row "
              "group: the full lake's data path bytes a trace are a floor")  # fmt: skip
    print(f"server memory {res.get('memory_kb')}")


if __name__ == "__main__":
    raise SystemExit(main())
