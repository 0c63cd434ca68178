#!/usr/bin/env python
"""Cheap-tier evaluation benchmark: traces evaluated per second on stored RAG-shaped traces.

Every trace has four spans in OpenInference attributes: a CHAIN root (carrying ``ragfault.case_id``
and ``ragfault.user_scope``), a RETRIEVER returning 20 documents (content 150-300 characters, ids and
metadata naming a knowledge-base document; a quarter of the traces carry no ids at all, so the
registry has to identify their documents by content), a RERANKER taking the 20 and keeping 5, and an
LLM call whose prompt (about 3 KB) holds the 5 reranked documents. The answer is 2-3 sentences,
mostly taken from the context, sometimes with a wrong number or a [doc-id] citation. Every trace has
a gold case (1-2 evidence units with quotes, 1-2 required facts); the registry holds a few hundred
documents, some superseded or restricted. Half of everything is English, half Chinese.

The database is built without the network path: export requests are flattened
(``collector.ingest.span_rows.flatten``) and written with ``Store.write_spans``, then assembled
(``LocalStore.settle_all``); gold cases and the registry go in with ``store_gold`` / ``store_kb``.
None of that is timed. Every figure is taken on traces the process has not evaluated before: the
lexical checker keeps what it works out by text, and a trace evaluated twice would find its answer's
claims and sentences done, which never happens in a server. The first tenth of the traces is
evaluated untimed (a running server has read the registry's documents before); the rest is split in
three, each part timed on its own third, in batches of 500 as ``ragfault evaluate`` runs them:

- **whole path**: ``StoreRunner.evaluate`` (load views, join cases, run every evaluator, write the
  rows to ``evaluations``), traces / wall second;
- **load** and **evaluators**: ``StoreRunner.inputs`` alone (DuckDB fetch and TraceView building),
  then ``Runner.run`` over those inputs;
- **per evaluator**: each evaluator's ``fn`` timed separately in run order (evaluators share per-trace
  caches — the evidence matching, normalized text — so the first one that needs a cache pays for it);
- **whole path with N workers** (``--workers``, default 2): ``StoreRunner.evaluate_many`` with an
  ``evaluators.service.pool.EvalPool`` of N worker processes, as ``ragfault evaluate --workers N`` runs it, on
  another fresh copy of the database and every trace; the pool is started before the clock starts
  (its start-up is reported apart);
- **server** (``--live``, e.g. ``0,2``): ``ragfault serve`` draining the whole backlog with its own
  scheduler and ``[evaluation] workers`` set (see ``measure_live``); ``--pad-traces N`` first adds N
  older, already evaluated traces to its ``traces`` table, as a server running for a while holds.

Run from the project root:

    .venv/bin/python bench/evaluate.py                         # 10,000 traces
    .venv/bin/python bench/evaluate.py --traces 20000 --repeat 3
    .venv/bin/python bench/evaluate.py --profile               # + cProfile of the whole path
    .venv/bin/python bench/evaluate.py --live 2 --pad-traces 1000000   # the server, 1M traces stored

The goal is to keep up with ingest: 10,000 spans/s of 4-span traces, i.e. 2,500 traces/s.
Results are printed and written to bench/results/evaluate.json.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import KeyValue  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status  # noqa: E402

from bench.ingest import _kv, llm_attrs  # noqa: E402  (one OTLP attribute builder for both benches)
from collector.ingest.span_rows import flatten  # noqa: E402
from collector.normalize import DEFAULT_SOURCE_KEYS  # noqa: E402
from evaluators.service.config import EvaluationSettings, evaluator_configs  # noqa: E402
from evaluators.service.loading import store_gold, store_kb  # noqa: E402
from evaluators.service.pool import EvalPool  # noqa: E402
from evaluators.service.registry import discover  # noqa: E402
from evaluators.service.runner import Runner, StoreRunner  # noqa: E402
from ragfault.local import LocalStore  # noqa: E402

try:  # the runner pauses the cyclic garbage collector during a batch; so do the part timings
    from evaluators.service.runner import gc_paused  # noqa: E402
except ImportError:  # an older runner
    from contextlib import nullcontext as gc_paused  # noqa: E402

GOAL = 2500.0  # traces/s: 10,000 spans/s of 4-span traces

# --------------------------------------------------------------------------------------------------
# the knowledge base

_EN_SUBJECTS = (
    "annual members", "monthly subscribers", "enterprise customers", "trial users", "students",
    "team administrators", "new accounts", "premium members", "resellers", "partner accounts",
)  # fmt: skip
_EN_ACTIONS = (
    "may request a refund", "can transfer the licence", "can export their data", "may change the billing cycle",
    "can add seats", "may cancel the renewal", "can request an invoice", "may downgrade the plan",
    "can restore deleted projects", "may extend the trial",
)  # fmt: skip
_EN_UNITS = ("days", "hours", "weeks", "months")
_EN_TAILS = (
    "The request is made from the account settings page.",
    "Approval is confirmed by email within one business day.",
    "Support tickets about this are escalated to the billing team.",
    "The amount is prorated by the remaining days of the cycle.",
    "Shipping fees and customs duties are not refundable.",
    "Store credit is issued when the original payment method has expired.",
    "Requests made through resellers follow the reseller's own terms.",
    "The audit log keeps a record of every change for two years.",
)  # fmt: skip
_ZH_SUBJECTS = (
    "年度会员",
    "月度会员",
    "企业客户",
    "试用用户",
    "学生用户",
    "团队管理员",
    "新注册用户",
    "高级会员",
    "经销商",
    "合作伙伴",
)
_ZH_ACTIONS = ("申请退款", "转让许可证", "导出数据", "更改账单周期", "增加席位", "取消自动续费", "申请发票", "降级套餐", "恢复已删除项目", "延长试用期")  # fmt: skip
_ZH_UNITS = ("天", "小时", "周", "个月")
_ZH_TAILS = (
    "申请需要在账户设置页面提交。",
    "审批结果会在一个工作日内通过邮件通知。",
    "相关工单会升级到账单团队处理。",
    "退款金额按剩余天数计算。",
    "运费和关税不予退还。",
    "原支付方式失效时将发放店铺余额。",
    "通过经销商购买的订单按经销商条款处理。",
    "审计日志会保留所有变更记录两年。",
)  # fmt: skip


def _key_sentence(rng: random.Random, zh: bool) -> tuple[str, str, str]:
    """(sentence, fact phrase, query) of one policy statement."""
    i = rng.randrange(len(_EN_SUBJECTS))
    j = rng.randrange(len(_EN_ACTIONS))
    n = rng.choice((3, 7, 14, 15, 30, 45, 60, 90))
    u = rng.randrange(len(_EN_UNITS))
    if zh:
        subj, act, unit = _ZH_SUBJECTS[i], _ZH_ACTIONS[j], _ZH_UNITS[u]
        return (
            f"{subj}在购买后 {n} {unit}内可以{act}，超过 {n} {unit}不支持{act}。",
            f"{n} {unit}内可以{act}",
            f"{subj}多久内可以{act}？",
        )
    subj, act, unit = _EN_SUBJECTS[i], _EN_ACTIONS[j], _EN_UNITS[u]
    return (
        f"{subj.capitalize()} {act} within {n} {unit} of purchase.",
        f"within {n} {unit}",
        f"How long after purchase {act.replace('may ', 'can ').replace('can ', 'can I ', 1)}?",
    )


def make_kb(rng: random.Random, n_docs: int) -> list[dict]:
    """Registry documents: content 150-300 characters, half Chinese; some superseded or restricted."""
    docs = []
    for k in range(n_docs):
        zh = k % 2 == 1
        key, fact, query = _key_sentence(rng, zh)
        tails = _ZH_TAILS if zh else _EN_TAILS
        parts = [key]
        limit = rng.randrange(150, 300) if not zh else rng.randrange(60, 120)  # Chinese is denser
        order = rng.sample(range(len(tails)), len(tails))
        for t in order:
            if len(" ".join(parts)) >= limit:
                break
            parts.append(tails[t])
        content = ("" if zh else " ").join(parts)
        doc = {
            "doc_id": f"kb-{k:04d}",
            "version": "2026",
            "valid_from": "2026-01-01",
            "content": content,
            "acl": ["finance"] if k % 37 == 0 else ["support", "sales"],
            "_key": key,
            "_fact": fact,
            "_query": query,
        }
        if k % 25 == 0 and k + 1 < n_docs:
            doc["superseded_by"] = f"kb-{k + 1:04d}"
            doc["valid_to"] = "2026-03-01"
        docs.append(doc)
    return docs


# --------------------------------------------------------------------------------------------------
# traces and gold cases


def _docs(prefix: str, docs: list[dict], with_ids: bool) -> list[KeyValue]:
    out = []
    for i, d in enumerate(docs):
        base = f"{prefix}.{i}.document."
        out += [_kv(base + "content", d["content"]), _kv(base + "score", round(1.0 - i * 0.03, 4))]
        if with_ids:
            meta = {"doc_id": d["doc_id"], "source": f"policies/{d['doc_id']}.md", "version": d["version"]}
            out += [_kv(base + "id", f"{d['doc_id']}#c0"), _kv(base + "metadata", json.dumps(meta))]
    return out


_SYSTEM_EN = (
    "You are a customer support assistant for a software subscription service. Answer only from the "
    "context documents below. If the context does not contain the answer, say that you do not know and "
    "suggest contacting support. Quote numbers, dates and identifiers exactly as the documents state "
    "them. Keep the answer short: two or three sentences. Cite the document ids you used in brackets. "
)
_SYSTEM_ZH = "你是软件订阅服务的客服助手。只能根据下面的资料回答；资料中没有答案时请说明不清楚并建议联系人工客服。数字、日期和编号必须与资料一致。回答保持简短，两到三句话，并在方括号中注明引用的文档编号。"  # fmt: skip


def rag_trace(
    rng: random.Random, t0_ns: int, n: int, kb: list[dict], system_copies: int = 4
) -> tuple[list[Span], dict]:
    """The four spans of one RAG request and its gold case; the LLM call's system message is the
    system prompt ``system_copies`` times (4: about 1.9 KB in English)."""
    zh = n % 2 == 1
    pool = [d for d in kb if (d["doc_id"][-1] in "13579") == zh] or kb
    evidence = rng.choice(pool)
    second = rng.choice(pool) if rng.random() < 0.4 else None
    others = rng.sample(pool, 20)
    cands = [d for d in others if d is not evidence and d is not second][:18]
    cands.insert(rng.randrange(0, 4), evidence)  # usually kept by the reranker
    cands.insert(rng.randrange(2, 15), second or rng.choice(pool))
    cands = cands[:20]
    kept = cands[:5] if rng.random() < 0.8 else cands[1:6]  # sometimes the reranker drops the evidence
    with_ids = n % 4 != 0
    case_id = f"case-{n:06d}"

    # the answer: the evidence's key sentence, another context sentence, sometimes a wrong number
    sents = [evidence["_key"]]
    if rng.random() < 0.15:
        sents[0] = sents[0].replace("30", "45").replace("7", "10")
    extra = rng.choice(kept)["content"]
    sents.append((extra.split("。")[1] + "。") if zh and "。" in extra[:-1] else extra.split(". ")[-1])
    if rng.random() < 0.5:
        sents.append(
            f"[{evidence['doc_id']}]"
            if with_ids
            else ("如有疑问请联系人工客服。" if zh else "Contact support for more details.")
        )
    answer = ("" if zh else " ").join(sents)
    query = evidence["_query"]
    context = "\n\n".join(f"[{i + 1}] {d['content']}" for i, d in enumerate(kept))
    system = (_SYSTEM_ZH if zh else _SYSTEM_EN) * system_copies
    prompt = f"Context:\n{context}\n\nQuestion: {query}"

    trace_id = rng.randbytes(16)
    ids = [rng.randbytes(8) for _ in range(4)]
    step = 50_000_000
    common: list[KeyValue] = []

    def span(i: int, parent: bytes, name: str, attrs: list[KeyValue], start: int, end: int) -> Span:
        return Span(
            trace_id=trace_id, span_id=ids[i], parent_span_id=parent, name=name, kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start, end_time_unix_nano=end, attributes=common + attrs,
            status=Status(code=Status.STATUS_CODE_OK),
        )  # fmt: skip

    spans = [
        span(0, b"", "rag.query", [
            _kv("openinference.span.kind", "CHAIN"), _kv("input.value", query), _kv("output.value", answer),
            _kv("ragfault.case_id", case_id), _kv("ragfault.user_scope", "support"),
            _kv("ragfault.run_id", "bench"),
        ], t0_ns, t0_ns + 4 * step),
        span(1, ids[0], "retrieve", [
            _kv("openinference.span.kind", "RETRIEVER"), _kv("input.value", query),
            *_docs("retrieval.documents", cands, with_ids),
        ], t0_ns + 1, t0_ns + step),
        span(2, ids[0], "rerank", [
            _kv("openinference.span.kind", "RERANKER"), _kv("reranker.query", query), _kv("reranker.top_k", 5),
            _kv("reranker.model_name", "bench-cross-encoder"),
            *_docs("reranker.input_documents", cands, with_ids),
            *_docs("reranker.output_documents", kept, with_ids),
        ], t0_ns + step, t0_ns + 2 * step),
        span(3, ids[0], "llm", llm_attrs(system, prompt, answer), t0_ns + 2 * step, t0_ns + 4 * step),
    ]  # fmt: skip

    ev = [{"doc_id": evidence["doc_id"], "quote": evidence["_key"]}]
    facts = [{"id": "f1", "text": evidence["_fact"], "aliases": [evidence["_fact"].replace(" ", "")]}]
    if second is not None:
        tail = second["content"][len(second["_key"]) :].strip()
        quote = (tail.split("。")[0] if zh else tail.split(". ")[0]) or second["_key"]
        ev.append(
            {"any_of": [{"doc_id": second["doc_id"], "quote": quote}, {"chunk_id": f"{second['doc_id']}#c9"}]}
        )
        facts.append({"id": "f2", "text": second["_fact"]})
    case = {
        "case_id": case_id, "query": query, "category": "policy", "must_retrieve": True,
        "evidence": ev, "required_facts": facts, "user_scope": ["support"], "as_of": "2026-06-01",
    }  # fmt: skip
    return spans, case


def export_requests(
    rng: random.Random,
    kb: list[dict],
    n_traces: int,
    per_request: int,
    t0: int,
    start: int = 0,
    system_copies: int = 4,
) -> Iterator[tuple[ExportTraceServiceRequest, list[dict]]]:
    """Export requests of ``per_request`` traces each (``rag_trace``, with ``system_copies``), with
    their gold cases; the traces are numbered from ``start`` (their case ids: ``case-{n:06d}``)."""
    for first in range(start, start + n_traces, per_request):
        req = ExportTraceServiceRequest()
        rs = req.resource_spans.add()
        rs.resource.attributes.extend([_kv("service.name", "bench-rag")])
        ss = rs.scope_spans.add()
        ss.scope.name = "openinference.instrumentation.bench"
        cases = []
        for n in range(first, min(first + per_request, start + n_traces)):
            spans, case = rag_trace(rng, t0 + n * 1_000_000, n, kb, system_copies)
            ss.spans.extend(spans)
            cases.append(case)
        yield req, cases


def build_db(path: str, n_traces: int, kb_docs: int, seed: int) -> tuple[LocalStore, dict[str, float]]:
    """A database holding the traces (assembled), their gold cases and the registry."""
    rng = random.Random(seed)
    kb = make_kb(rng, kb_docs)
    local = LocalStore(path)
    t0 = time.time_ns() - 24 * 3600 * 10**9
    cases = []
    timings: dict[str, float] = {}
    start = time.perf_counter()
    for req, req_cases in export_requests(rng, kb, n_traces, 500, t0):
        cases.extend(req_cases)
        batch = flatten(req, source_keys=DEFAULT_SOURCE_KEYS)
        local.store.write_spans(local.store.con, batch)
    timings["write_spans_s"] = time.perf_counter() - start
    start = time.perf_counter()
    local.settle_all()
    timings["settle_s"] = time.perf_counter() - start
    public = [{k: v for k, v in d.items() if not k.startswith("_")} for d in kb]
    store_kb(local.write, "\n".join(json.dumps(d, ensure_ascii=False) for d in public))
    store_gold(local.write, "\n".join(json.dumps(c, ensure_ascii=False) for c in cases), dataset="bench")
    local.store.con.execute("CHECKPOINT")
    return local, timings


# --------------------------------------------------------------------------------------------------
# measuring


def trace_ids(local: LocalStore) -> list[str]:
    cur = local.store.cursor()
    return [
        r[0]
        for r in cur.execute(
            "SELECT trace_id FROM traces WHERE settled_at IS NOT NULL ORDER BY first_received_at, trace_id"
        ).fetchall()
    ]


def measure(local: LocalStore, ids: list[str], batch: int, profile: cProfile.Profile | None) -> dict:
    """The in-process parts, each timed on traces it has not seen before.

    The lexical checker keeps what it works out by text: a trace evaluated a second time finds its
    answer, claims and sentences done, which a server never does (each trace is new). So the first
    tenth of the traces is evaluated untimed (as a running server has seen the registry's documents
    before), and the rest split in three: the whole path, then loading and the evaluators, then the
    evaluators one by one."""
    specs = discover()
    configs = evaluator_configs(EvaluationSettings(), specs)
    runner = Runner(specs, configs)
    store_runner = StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)
    store_runner.refs.refresh(store_runner.cursor)  # the registry is loaded once per server, not per batch
    n_warm = len(ids) // 10
    third = (len(ids) - n_warm) // 3
    warm = ids[:n_warm]
    whole_ids, parts_ids, per_ids = (ids[n_warm + i * third : n_warm + (i + 1) * third] for i in range(3))
    for i in range(0, len(warm), batch):
        store_runner.evaluate(warm[i : i + batch])

    # 1. the whole path, as `ragfault evaluate` runs it
    if profile is not None:
        profile.enable()
    start = time.perf_counter()
    for i in range(0, len(whole_ids), batch):
        store_runner.evaluate(whole_ids[i : i + batch])
    whole = time.perf_counter() - start
    if profile is not None:
        profile.disable()
    rows = local.store.con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]

    # 2. loading alone and the evaluators alone, 3. each evaluator (in run order)
    load = pure = 0.0
    errors = 0
    for i in range(0, len(parts_ids), batch):
        with gc_paused():
            load, pure, errors = _parts(store_runner, runner, parts_ids[i : i + batch], load, pure, errors)
    per: dict[str, float] = {n: 0.0 for n in runner.specs}
    for i in range(0, len(per_ids), batch):
        with gc_paused():
            _per_evaluator(store_runner, runner, configs, per_ids[i : i + batch], per)

    return {
        "traces": len(ids),
        "warm_up_traces": len(warm),
        "whole_traces": len(whole_ids),
        "parts_traces": len(parts_ids),
        "per_evaluator_traces": len(per_ids),
        "evaluation_rows": rows,
        "rows_per_trace": rows / (len(warm) + len(whole_ids)),
        "error_rows": errors,
        "whole_s": whole,
        "load_s": load,
        "evaluators_s": pure,
        "per_evaluator_s": per,
        "whole_tps": len(whole_ids) / whole,
        "load_tps": len(parts_ids) / load,
        "evaluators_tps": len(parts_ids) / pure,
        "per_evaluator_tps": {k: (len(per_ids) / v if v else float("inf")) for k, v in per.items()},
    }


def measure_pool(local: LocalStore, ids: list[str], batch: int, workers: int) -> dict:
    """The whole path with a pool of worker processes (started before the clock starts)."""
    specs = discover()
    configs = evaluator_configs(EvaluationSettings(), specs)
    store_runner = StoreRunner(local.store.cursor(), local.write, Runner(specs, configs), DEFAULT_SOURCE_KEYS)
    store_runner.refs.refresh(store_runner.cursor)
    t = time.perf_counter()
    with EvalPool(workers, store_runner.runner, DEFAULT_SOURCE_KEYS) as pool:
        pool.start()
        started = time.perf_counter() - t
        t = time.perf_counter()
        n = store_runner.evaluate_many(ids, batch, pool)
        whole = time.perf_counter() - t
        restarts = pool.restarts
    rows = local.store.con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]
    return {"workers": workers, "traces": n, "evaluation_rows": rows, "whole_s": whole, "whole_tps": n / whole,
            "start_s": started, "restarts": restarts}  # fmt: skip


def pad_traces(path: str, n: int) -> None:
    """Add ``n`` older traces to ``traces`` (assembled and evaluated, received a day or more before
    the benchmark's), as a server that has been running a while holds: evaluation looks traces up
    in that table by id, so this shows how its cost grows with the table. Only ``traces`` rows: the
    other tables are read by received time and skip old rows anyway."""
    import duckdb

    con = duckdb.connect(path)
    try:
        con.execute(
            "INSERT INTO traces (trace_id, first_received_at, last_received_at, start_time, end_time, service_name, "
            "span_count, assembled_spans, evaluated_spans, has_root, settled_at, evaluated_at, eval_generation) "
            "SELECT md5('pad' || i::VARCHAR), t, t, t, t, 'bench-old', 4, 4, 4, true, t, t, 1 FROM ("
            "SELECT i, (SELECT min(first_received_at) FROM traces) - INTERVAL 1 DAY - INTERVAL (i) SECOND AS t "
            "FROM range($n) r(i)) ORDER BY t",
            {"n": n},
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()


def measure_live(base: str, workdir: Path, workers: int, batch: int, n_traces: int) -> dict:
    """The server's own scheduler draining a backlog: ``ragfault serve`` on a copy of the database,
    whose traces are all settled and waiting, with ``[evaluation] workers`` set. The rate is taken
    from ``ragfault_traces_evaluated_total`` polled every 50 ms. The server's figure is the rate
    between 10 % and 90 % of the traces evaluated: steady state, with batches in flight at both
    ends (loading the gold cases, starting the workers and the last round's bookkeeping fall
    outside; with fewer than ten batches a worker there is no steady state and the figure is left
    out). Also: from the first batch written to the last, which overstates the rate (the
    batches the workers evaluated alongside the first one were under way before the clock started:
    with batches of 500 among 10,000 traces, by 3-5 %; with a few large batches, by a fifth or
    more); from the server answering until the last batch, start-up included; and the time from
    the server answering to its first batch written (start-up with a backlog)."""
    from bench.ingest import ragfault_bin
    from tests.served import free_ports, stop_process, wait_http

    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "live.duckdb"
    with open(base, "rb") as src, open(db, "wb") as dst:
        dst.write(src.read())
    cfg = workdir / "ragfault.toml"
    cfg.write_text(
        f"[evaluation]\nbatch_size = {batch}\nworkers = {workers}\n[sampling]\nproduction_rate = 0.0\n"
    )
    port, grpc = free_ports(2)
    log_path = workdir / "ragfault.log"
    cmd = ragfault_bin() + [
        "serve", "--db", str(db), "--http-port", str(port), "--grpc-port", str(grpc), "--config", str(cfg),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=log_path.open("w"), stderr=subprocess.STDOUT, cwd=workdir)
    samples: list[tuple[float, int]] = []
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, 60, log_path)
        t_ready = time.monotonic()
        deadline = time.monotonic() + 600
        done = 0
        while done < n_traces and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                for line in r.read().decode().splitlines():
                    if line.startswith('ragfault_traces_evaluated_total{tier="cheap"}'):
                        done = int(float(line.split()[-1]))
            if not samples or done != samples[-1][1]:
                samples.append((time.monotonic(), done))
            time.sleep(0.05)
    finally:
        stop_process(proc)
    moving = [x for x in samples if x[1] > 0]
    if len(moving) < 2 or moving[-1][1] < n_traces:
        raise RuntimeError(
            f"the server evaluated {samples[-1][1] if samples else 0} of {n_traces} traces; see {log_path}"
        )
    (t0, n0), (t1, n1) = moving[0], moving[-1]

    def reached(share: float) -> tuple[float, int]:
        return next(x for x in samples if x[1] >= share * n_traces)

    (ta, na), (tb, nb) = reached(0.1), reached(0.9)
    return {
        "workers": workers, "traces": n1, "seconds": t1 - t0, "whole_tps": (n1 - n0) / (t1 - t0),
        # steady at 10 % only once the workers have written a batch each (before that, the second
        # worker's first batch was under way before the first batch was written)
        "middle_tps": (nb - na) / (tb - ta) if tb > ta and 0.1 * n_traces >= max(1, workers) * batch else None,
        "from_ready_tps": n1 / (t1 - t_ready), "first_batch_s": t0 - t_ready,
    }  # fmt: skip


def _parts(store_runner, runner, chunk, load, pure, errors):  # noqa: ANN001, ANN202
    t = time.perf_counter()
    inputs, _ = store_runner.inputs(chunk)
    load += time.perf_counter() - t
    t = time.perf_counter()
    for inp in inputs:
        errors += sum(1 for _, m in runner.run(inp) if m.status == "error")
    pure += time.perf_counter() - t
    return load, pure, errors


def _per_evaluator(store_runner, runner, configs, chunk, per) -> None:  # noqa: ANN001
    inputs, _ = store_runner.inputs(chunk)
    for inp in inputs:
        for name, spec in runner.specs.items():
            if spec.needs_case and inp.case is None:
                continue
            t = time.perf_counter()
            spec.fn(inp, configs[name])
            per[name] += time.perf_counter() - t


def _table(results: list[dict]) -> str:
    def med(f) -> float:
        return statistics.median(f(r) for r in results)

    lines = [f"{'part':<28}{'traces/s':>12}{'ms / 1k traces':>16}{'share of eval':>15}"]
    lines.append("-" * len(lines[0]))
    per_all_ms = med(lambda r: sum(r["per_evaluator_s"].values()) / r["per_evaluator_traces"] * 1e6)
    for label, key, count in (
        ("whole path (load+eval+write)", "whole", "whole_traces"),
        ("load views + cases", "load", "parts_traces"),
        ("evaluators (Runner.run)", "evaluators", "parts_traces"),
    ):
        tps = med(lambda r, key=key: r[f"{key}_tps"])
        ms = med(lambda r, key=key, count=count: r[f"{key}_s"] / r[count] * 1e6)
        lines.append(f"{label:<28}{tps:>12,.0f}{ms:>16.1f}{'':>15}")
    lines.append("  per evaluator (run order):")
    for name in results[0]["per_evaluator_s"]:
        tps = med(lambda r, name=name: r["per_evaluator_tps"][name])
        ms = med(lambda r, name=name: r["per_evaluator_s"][name] / r["per_evaluator_traces"] * 1e6)
        lines.append(f"    {name:<24}{tps:>12,.0f}{ms:>16.1f}{ms / per_all_ms:>14.0%}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=10_000)
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument(
        "--batch", type=int, default=500, help="traces per StoreRunner.evaluate call (as ragfault evaluate)"
    )
    ap.add_argument("--repeat", type=int, default=3, help="measurements on fresh copies of the database")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--profile", action="store_true", help="cProfile the whole path of the first repeat")
    ap.add_argument(
        "--workers",
        default="2",
        help="comma-separated pool sizes for the multi-process whole path (0 or '' for none)",
    )
    ap.add_argument(
        "--live",
        default="",
        help="comma-separated [evaluation] workers for the server's scheduler draining a backlog (e.g. 0,2)",
    )
    ap.add_argument(
        "--pad-traces", type=int, default=0,
        help="older traces added to the traces table for the --live runs (a long-running server's table)",
    )  # fmt: skip
    ap.add_argument("--out", default=str(RESULTS / "evaluate.json"))
    args = ap.parse_args()

    pool_sizes = [int(w) for w in args.workers.split(",") if w.strip() and int(w) > 0]
    live_sizes = [int(w) for w in args.live.split(",") if w.strip()]
    results = []
    pooled: dict[int, list[dict]] = {w: [] for w in pool_sizes}
    live: dict[int, list[dict]] = {w: [] for w in live_sizes}
    with tempfile.TemporaryDirectory(prefix="ragfault-bench-eval-") as tmp:
        base = os.path.join(tmp, "base.duckdb")
        t = time.perf_counter()
        local, build = build_db(base, args.traces, args.kb_docs, args.seed)
        local.close()
        print(
            f"built {args.traces:,} traces ({4 * args.traces:,} spans) in {time.perf_counter() - t:.1f}s: {build}"
        )
        profile = cProfile.Profile() if args.profile else None
        for r in range(args.repeat):
            path = os.path.join(tmp, f"run{r}.duckdb")
            with open(base, "rb") as src, open(path, "wb") as dst:
                dst.write(src.read())
            local = LocalStore(path)
            try:
                ids = trace_ids(local)
                res = measure(local, ids, args.batch, profile if r == 0 else None)
            finally:
                local.close()
            results.append(res)
            print(
                f"run {r + 1}: whole {res['whole_tps']:,.0f} traces/s, load {res['load_tps']:,.0f}/s, "
                f"evaluators {res['evaluators_tps']:,.0f}/s ({res['rows_per_trace']:.0f} rows a trace, "
                f"{res['error_rows']} errors)"
            )
            for w in pool_sizes:
                path = os.path.join(tmp, f"run{r}-w{w}.duckdb")
                with open(base, "rb") as src, open(path, "wb") as dst:
                    dst.write(src.read())
                local = LocalStore(path)
                try:
                    pres = measure_pool(local, trace_ids(local), args.batch, w)
                finally:
                    local.close()
                pooled[w].append(pres)
                print(
                    f"run {r + 1}: whole with {w} workers {pres['whole_tps']:,.0f} traces/s "
                    f"({pres['evaluation_rows']:,} rows, pool start {pres['start_s']:.2f}s, {pres['restarts']} restarts)"
                )
            if live_sizes and args.pad_traces and r == 0:
                t = time.perf_counter()
                live_base = os.path.join(tmp, "live-base.duckdb")
                with open(base, "rb") as src, open(live_base, "wb") as dst:
                    dst.write(src.read())
                pad_traces(live_base, args.pad_traces)
                print(
                    f"added {args.pad_traces:,} older traces for the server runs in {time.perf_counter() - t:.1f}s"
                )
            for w in live_sizes:
                src_db = os.path.join(tmp, "live-base.duckdb") if args.pad_traces else base
                lres = measure_live(src_db, Path(tmp) / f"live{r}-w{w}", w, args.batch, args.traces)
                live[w].append(lres)
                middle = f"{lres['middle_tps']:,.0f}" if lres["middle_tps"] else "-"
                print(
                    f"run {r + 1}: server scheduler with workers = {w}: 10-90 % of the backlog {middle} traces/s "
                    f"(first to last batch: {lres['whole_tps']:,.0f}; from ready to the last batch: "
                    f"{lres['from_ready_tps']:,.0f}; first batch written {lres['first_batch_s']:.2f}s after ready)"
                )
    print()
    print(
        f"median of {len(results)} runs, {args.traces:,} traces, batches of {args.batch}, {os.cpu_count()} cores"
    )
    print(_table(results))
    for w, runs in pooled.items():
        tps = statistics.median(p["whole_tps"] for p in runs)
        print(f"{'whole path, ' + str(w) + ' workers':<28}{tps:>12,.0f}{1e6 / tps:>16.1f}")
    server: list[float] = []
    for w, runs in live.items():
        ready = statistics.median(p["from_ready_tps"] for p in runs)
        if all(p["middle_tps"] for p in runs):  # the steady state (see measure_live)
            tps = statistics.median(p["middle_tps"] for p in runs)
            print(f"{'server, workers = ' + str(w) + ', 10-90 %':<28}{tps:>12,.0f}{1e6 / tps:>16.1f}")
            print(f"{'  from ready (start-up in)':<28}{ready:>12,.0f}{1e6 / ready:>16.1f}")
        else:  # too few batches for a steady state
            tps = ready
            print(f"{'server, workers = ' + str(w) + ', from ready':<28}{tps:>12,.0f}{1e6 / tps:>16.1f}")
        server.append(tps)
    whole = statistics.median(r["whole_tps"] for r in results)
    best = max(
        [whole, *server] + [statistics.median(p["whole_tps"] for p in runs) for runs in pooled.values()]
    )
    verdict = "meets" if best >= GOAL else "misses"
    print(f"\nwhole path {whole:,.0f} traces/s in-process, best {best:,.0f} traces/s: {verdict} the goal of "
          f"{GOAL:,.0f} traces/s (10,000 spans/s)")  # fmt: skip
    if profile is not None:
        s = io.StringIO()
        pstats.Stats(profile, stream=s).sort_stats("cumulative").print_stats(45)
        print(s.getvalue())
        prof_path = RESULTS / "evaluate.prof"
        RESULTS.mkdir(exist_ok=True)
        profile.dump_stats(str(prof_path))
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
                "median_whole_tps": whole,
                "runs": results,
                "pooled_runs": {str(w): runs for w, runs in pooled.items()},
                "live_runs": {str(w): runs for w, runs in live.items()},
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
