"""``bench/scaleout.py --failover``: how long a lake collector's work waits once it is killed.

Two ``ragfault serve --store ducklake`` processes on a new lake; the requests are sent to both at once
(a closed-loop sender each). Once the first holds claims in the catalog and a third of the requests
are acknowledged, it is killed with SIGKILL; its sender then re-sends what was not acknowledged to
the survivor, and sends the rest there. Measured from the kill: the seconds until the last trace the
killed collector held a claim on was evaluated by the survivor, and until every trace was.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.ingest import build_requests
from tests.pg import Postgres, postgres_cluster
from tests.served import Collector

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TIMEOUT = 300.0  # seconds after the kill before a run is given up


def _spin() -> None:
    while True:
        pass


def _collector(catalog: str, data: Path, log: Path) -> Collector:
    env = {"RAGFAULT_EXTENSION_REPOSITORY": "false", "RAGFAULT_MEMORY_LIMIT": "1GB"}
    store = ["--store", "ducklake", "--catalog", catalog, "--data-path", str(data), "--settle-seconds", "1"]
    return Collector(store, log, env)


def _sql(url: str, sql: str) -> list[list[Any]]:
    r = httpx.post(f"{url}/api/v1/sql", json={"sql": sql, "max_rows": 100_000}, timeout=120)
    r.raise_for_status()
    rows: list[list[Any]] = r.json()["rows"]
    return rows


def _held(pg: Postgres, db: str, pid: int) -> list[tuple[str, str]]:
    """(kind, trace id) of the claims the process ``pid`` holds, read in the catalog database."""
    out = pg.query(db, f"SELECT kind, trace_id FROM ragfault_claim WHERE holder LIKE '%:{pid}:%'")
    return [(k, t) for k, t in (line.split("|") for line in out.splitlines() if line)]


def one_run(pg: Postgres, n: int, bodies: list[bytes], traces: int, tmp: Path) -> dict[str, Any]:
    db = f"failover{n}"
    catalog = pg.create_database(db)
    collectors = [_collector(catalog, tmp / "data", tmp / f"collector{i}.log") for i in range(2)]
    try:
        for c in collectors:
            c.wait_ready()
        victim, survivor = collectors
        acked = [0]
        dead = threading.Event()
        lock = threading.Lock()
        queues = [bodies[0::2], bodies[1::2]]

        def sender(i: int) -> None:
            with httpx.Client(timeout=120) as client:
                for body in queues[i]:
                    while True:
                        target = survivor if (i == 0 and dead.is_set()) else collectors[i]
                        try:
                            r = client.post(f"{target.url}/v1/traces", content=body, headers=PROTOBUF)
                        except httpx.HTTPError:
                            continue  # (the victim was killed meanwhile: to the survivor)
                        if r.status_code < 300:
                            with lock:
                                acked[0] += 1
                            break
                        time.sleep(0.2)  # 503 / 429: re-sent shortly, as an exporter does

        threads = [threading.Thread(target=sender, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        held: list[tuple[str, str]] = []
        while True:  # the victim killed once it holds claims and a third is acknowledged
            held = _held(pg, db, victim.proc.pid)
            if (held and acked[0] >= len(bodies) // 3) or not any(t.is_alive() for t in threads):
                break
            time.sleep(0.02)  # (how often the catalog is looked at)
        victim.proc.kill()
        victim.proc.wait(30)
        killed = time.monotonic()
        dead.set()
        load = os.getloadavg()[0]
        for t in threads:
            t.join()
        sent = time.monotonic()
        ids = sorted({t for _, t in held})
        taken = last_held = everything = None
        done = "SELECT count(*) FROM traces WHERE eval_generation > 0 AND evaluated_spans = assembled_spans"

        def listed(values: list[str]) -> str:
            return ", ".join(f"'{t}'" for t in values) or "''"

        among = f" AND trace_id IN ({listed(ids)})"
        # taken over: each held trace settled (a settle claim) or evaluated (an evaluate or judge one)
        settle_ids = listed(sorted({t for k, t in held if k == "settle"}))
        work = (
            f"SELECT count(*) FROM traces WHERE (trace_id IN ({settle_ids}) AND settled_at IS NOT NULL) "
            f"OR (evaluated_spans = assembled_spans AND eval_generation > 0{among})"
        )
        after_send: float | None = None
        while time.monotonic() - killed < TIMEOUT and everything is None:
            if taken is None and (not ids or _sql(survivor.url, work)[0][0] >= len(ids)):
                taken = time.monotonic() - killed
            if last_held is None and (not ids or _sql(survivor.url, done + among)[0][0] == len(ids)):
                last_held = time.monotonic() - killed
            if _sql(survivor.url, done)[0][0] >= traces:
                everything = time.monotonic() - killed
                after_send = time.monotonic() - sent
            time.sleep(0.1)  # (how often the survivor is asked)
        twice = _sql(
            survivor.url,
            "SELECT count(*) FROM (SELECT trace_id, generation FROM trace_evals WHERE event = 'evaluated' "
            "GROUP BY ALL HAVING count(*) > 1)",
        )[0][0]
        kinds = {k: sum(1 for kind, _ in held if kind == k) for k in ("settle", "evaluate", "judge")}
        woke = "without a wake-up" in survivor.log.read_text()
        return {
            "held_at_kill": kinds,
            "seconds_to_held_work_done": taken,
            "seconds_to_last_held_evaluated": last_held,
            "seconds_to_all_evaluated": everything,
            "seconds_from_last_send_to_all_evaluated": after_send,
            "generations_evaluated_twice": twice,
            "idle_poll_found_traces": woke,
            "load_average_at_kill": load,
        }
    finally:
        for c in collectors:
            c.stop()


def failover_runs(args: argparse.Namespace, default_out: Path) -> int:
    import duckdb

    bodies, spans = build_requests(args.traces, args.traces_per_request, args.seed)
    burners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.burn)]
    for b in burners:
        b.start()
    results: dict[str, Any] = {
        "duckdb": duckdb.__version__, "traces": args.traces, "spans": spans, "requests": len(bodies),
        "cores": os.cpu_count(), "burn": args.burn, "runs": [],
    }  # fmt: skip
    try:
        with tempfile.TemporaryDirectory(prefix="ragfault-failover-") as d, postgres_cluster() as pg:
            for n in range(args.failover):
                where = Path(d) / f"run{n}"
                where.mkdir()
                run = one_run(pg, n, bodies, args.traces, where)
                results["runs"].append(run)
                print(json.dumps(run), flush=True)
    finally:
        for b in burners:
            b.kill()
    print()
    print("| run | held at kill (settle / evaluate / judge) | kill → held work done | kill → last held trace "
          "evaluated | kill → all evaluated | last send → all evaluated | evaluated twice | found by the idle "
          "poll | load average |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(results["runs"], 1):
        h = r["held_at_kill"]

        def sec(v: float | None) -> str:
            return "—" if v is None else f"{v:.1f} s"

        print(
            f"| {i} | {h['settle']} / {h['evaluate']} / {h['judge']} | {sec(r['seconds_to_held_work_done'])} | "
            f"{sec(r['seconds_to_last_held_evaluated'])} | {sec(r['seconds_to_all_evaluated'])} | "
            f"{sec(r['seconds_from_last_send_to_all_evaluated'])} | {r['generations_evaluated_twice']} | "
            f"{'yes' if r['idle_poll_found_traces'] else 'no'} | {r['load_average_at_kill']:.1f} |"
        )
    out = args.out or default_out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 0
