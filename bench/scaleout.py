#!/usr/bin/env python
"""Several collectors on one lake behind HAProxy, against one collector on the single DuckDB file, in
the same run: persisted spans a second, acknowledgement latency, exactly-once counts, and traces
evaluated end to end a second where the store evaluates.

Each configuration starts real ``ragfault serve`` processes and sends the same OTLP/HTTP protobuf
requests (``bench/ingest.py``'s RAG traces: 4 spans and 20 documents each) from ``--senders``
closed-loop threads through ``deploy/haproxy.cfg`` (Debian's haproxy) in front of them; a request
counts once it is acknowledged (2xx: its spans are committed). 503 / 429 are re-sent after a short
pause, as an exporter would. Then ``--resend`` of the requests are sent again (the balancer may
route them to another collector), and the SQL API through the balancer counts the rows of
``spans``: total, distinct (trace_id, span_id), expected — exactly once means all three agree.

Configurations: ``file`` (one collector, ``--db``), and ``lake×N`` for N in ``--collectors`` (a
throwaway PostgreSQL catalog from ``tests/pg.py`` and a local data path). Every collector also settles
and evaluates (on a lake, the traces it claimed): the time from the first request until the SQL API
finds every trace settled with all its spans and evaluated gives traces evaluated end to end a
second. Per collector, ``ragfault_write_seconds`` from ``/metrics`` gives the mean and worst
commit. Ratios are to the file store of the same run.

Failover (``--failover RUNS``, instead of the above): two collectors on a new lake, the requests
sent to both at once; once one of them holds claims (the catalog shows them) and a third of the
requests are acknowledged, it is killed with SIGKILL, and what was to go to it goes to the other,
as an exporter whose collector vanished re-sends. Per run, in a table: the claims the killed
collector held (settle, evaluate, judge), the seconds from its death until the last trace it held was
evaluated by the survivor and until every trace was, whether every trace was evaluated exactly once
(one generation), and the load average (``--burn N`` keeps N processes spinning meanwhile, for a
machine under load).

Run from the project root in the environment with the lake set (DuckDB 1.5.5):

    python -m tests.store.lake_venv        # prints .lake-venv/bin/python, creating it if needed
    .lake-venv/bin/python bench/scaleout.py --traces 4000 --collectors 1,2,3
    .lake-venv/bin/python bench/scaleout.py --failover 2 --traces 600 --burn 2

Results are printed and written to bench/results/scaleout.json (scaleout_failover.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402

from bench.ingest import build_requests  # noqa: E402
from tests.haproxy import HAProxy, behind_haproxy  # noqa: E402
from tests.pg import postgres_cluster  # noqa: E402
from tests.served import Collector  # noqa: E402

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def collector(store_args: list[str], log: Path) -> Collector:
    env = {"RAGFAULT_EXTENSION_REPOSITORY": "false", "RAGFAULT_MEMORY_LIMIT": "2GB"}
    return Collector([*store_args, "--settle-seconds", "1"], log, env)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def send_all(url: str, bodies: list[bytes], senders: int) -> tuple[float, list[float], int]:
    """Closed loop: ``senders`` threads post the bodies in turn; wall seconds, each request's latency
    until its acknowledgement, and how many answers were 503/429 (re-sent)."""
    todo = list(enumerate(bodies))
    lock = threading.Lock()
    latencies: list[float] = []
    refused = [0]

    def worker() -> None:
        with httpx.Client(timeout=120) as client:
            while True:
                with lock:
                    if not todo:
                        return
                    _, body = todo.pop()
                t0 = time.perf_counter()
                while True:
                    r = client.post(f"{url}/v1/traces", content=body, headers=PROTOBUF)
                    if r.status_code in (429, 502, 503, 504):
                        with lock:
                            refused[0] += 1
                        time.sleep(0.05)
                        continue
                    r.raise_for_status()
                    break
                with lock:
                    latencies.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=worker) for _ in range(senders)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, latencies, refused[0]


def counts(url: str) -> tuple[int, int]:
    r = httpx.post(
        f"{url}/api/v1/sql",
        json={"sql": "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans"},
        timeout=120,
    )
    r.raise_for_status()
    total, distinct = r.json()["rows"][0]
    return int(total), int(distinct)


def _scalar_row(url: str, sql: str) -> list[Any]:
    r = httpx.post(f"{url}/api/v1/sql", json={"sql": sql}, timeout=120)
    r.raise_for_status()
    row: list[Any] = r.json()["rows"][0]
    return row


def evaluated(url: str) -> int:
    """Traces settled with every span and evaluated since (the cheap tier's verdicts written)."""
    return int(
        _scalar_row(
            url,
            "SELECT count(*) FROM traces WHERE eval_generation > 0 AND assembled_spans = span_count "
            "AND evaluated_spans = assembled_spans",
        )[0]
    )


def evaluation_counts(url: str) -> tuple[int, int]:
    total, most = _scalar_row(url, "SELECT sum(eval_generation), max(eval_generation) FROM traces")
    return int(total or 0), int(most or 0)


@contextmanager
def running(store_args: list[str], n: int, tmp: Path) -> Iterator[tuple[list[Collector], HAProxy]]:
    collectors = [collector(store_args, tmp / f"collector{i}.log") for i in range(n)]
    with behind_haproxy(collectors, tmp / "haproxy.log") as lb:
        yield collectors, lb


def measure(
    name: str, store_args: list[str], n: int, bodies: list[bytes], spans: int, traces: int,
    args: argparse.Namespace, tmp: Path, evaluates: bool,
) -> dict[str, Any]:  # fmt: skip
    with running(store_args, n, tmp) as (collectors, lb):
        t_start = time.perf_counter()
        wall, lat, refused = send_all(lb.url, bodies, args.senders)
        resent = bodies[:: max(1, round(1 / args.resend))] if args.resend > 0 else []
        send_all(lb.url, resent, args.senders)
        evaluated_per_s = evaluated_s = None
        if evaluates:  # from the first request until every trace was settled and evaluated (cheap tier)
            deadline = time.perf_counter() + 900
            while time.perf_counter() < deadline:
                if evaluated(lb.url) >= traces:
                    evaluated_s = time.perf_counter() - t_start
                    evaluated_per_s = traces / evaluated_s
                    break
                time.sleep(0.5)
        total, distinct = counts(lb.url)
        evaluations, generations = evaluation_counts(lb.url) if evaluates else (None, None)
        writes = [(c.metric("ragfault_write_seconds_count"), c.metric("ragfault_write_seconds_sum"),
                   c.metric("ragfault_write_seconds_max")) for c in collectors]  # fmt: skip
        stored = [c.metric("ragfault_spans_stored_total") for c in collectors]
    out = {
        "collectors": n,
        "spans_per_s": spans / wall,
        "ack_p50_ms": 1000 * pct(lat, 0.5),
        "ack_p99_ms": 1000 * pct(lat, 0.99),
        "refused_and_resent": refused,
        "commit_mean_ms": 1000 * sum(w[1] for w in writes) / max(1, sum(w[0] for w in writes)),
        "commit_max_ms": 1000 * max(w[2] for w in writes),
        "commits": int(sum(w[0] for w in writes)),
        "stored_per_collector": [int(s) for s in stored],
        "rows": total,
        "distinct": distinct,
        "expected": spans,
        "exactly_once": total == distinct == spans,
        "resent_requests": len(resent),
        "traces_evaluated_per_s": evaluated_per_s,
        "seconds_until_all_evaluated": evaluated_s,
        # evaluations written (sum of generations) and the most a trace had: more than one trace's
        # worth when a trace was settled before its last spans came (then again with them)
        "evaluations": evaluations,
        "max_generation": generations,
    }
    print(f"{name}: {json.dumps(out)}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=4000)
    ap.add_argument("--traces-per-request", type=int, default=20)
    ap.add_argument("--senders", type=int, default=6)
    ap.add_argument("--collectors", default="1,2,3", help="lake configurations: collectors behind HAProxy")
    ap.add_argument("--resend", type=float, default=0.1, help="share of requests sent a second time")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--out", type=Path, default=None, help="default: bench/results/scaleout(_failover).json")
    ap.add_argument("--failover", type=int, default=0, help="runs of the failover measurement instead")
    ap.add_argument("--burn", type=int, default=0, help="processes spinning during --failover (CPU load)")
    args = ap.parse_args()
    if args.failover:
        from bench.scaleout_failover import failover_runs

        return failover_runs(args, HERE / "results" / "scaleout_failover.json")
    args.out = args.out or HERE / "results" / "scaleout.json"

    import duckdb

    bodies, spans = build_requests(args.traces, args.traces_per_request, args.seed)
    results: dict[str, Any] = {
        "duckdb": duckdb.__version__, "traces": args.traces, "spans": spans, "requests": len(bodies),
        "senders": args.senders, "cores": os.cpu_count(), "load_average_at_start": os.getloadavg()[0],
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ragfault-scaleout-") as d:
        tmp = Path(d)
        (tmp / "file").mkdir()
        results["file"] = measure(
            "file", ["--db", str(tmp / "file" / "bench.duckdb")], 1, bodies, spans, args.traces, args,
            tmp / "file", evaluates=True,
        )  # fmt: skip
        with postgres_cluster() as pg:
            for n in (int(x) for x in args.collectors.split(",")):
                where = tmp / f"lake{n}"
                where.mkdir()
                catalog = pg.create_database(f"scaleout{n}")
                store = ["--store", "ducklake", "--catalog", catalog, "--data-path", str(where / "data")]
                results[f"lake×{n}"] = measure(
                    f"lake×{n}", store, n, bodies, spans, args.traces, args, where, evaluates=True
                )
    f = results["file"]
    results["ratios_to_file"] = {
        k: {
            "spans_per_s": v["spans_per_s"] / f["spans_per_s"],
            "ack_p50": v["ack_p50_ms"] / f["ack_p50_ms"],
            "ack_p99": v["ack_p99_ms"] / f["ack_p99_ms"],
            "traces_evaluated_per_s": (
                v["traces_evaluated_per_s"] / f["traces_evaluated_per_s"]
                if v["traces_evaluated_per_s"] and f["traces_evaluated_per_s"]
                else None
            ),
        }
        for k, v in results.items()
        if k.startswith("lake×")
    }
    results["note"] = (
        "traces_evaluated_per_s: traces over the seconds from the first request until every trace was "
        "settled with all its spans and evaluated (null when that took over 900 s); on the lake every "
        "collector settles and evaluates the traces it claimed in the catalog"
    )
    print(json.dumps(results, indent=2, ensure_ascii=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
