"""Soak: RAG-shaped traffic at a steady rate for minutes, sampling on, a slow judge; watch lag and RSS.

    python -m bench.soak --minutes 6 --rate 20 --judge-latency 1.0 --judge-concurrency 2

Starts the local OpenAI-compatible judge server (``bench.judge_server``: answers the real judge's
tasks with well-formed JSON after ``--judge-latency`` seconds) and a ``ragfault serve`` subprocess
whose config file turns sampling on (production rate ``--sample-rate``, experiment traffic in full,
triggers on), points the real judge tier (``[judge]``, ``evaluators.judge.service``) at that server,
bounds the judge queue (``--judge-queue-max``, ``--judge-max-wait``) and DuckDB's memory
(``[server] memory_limit``, ``--memory-limit``). Sends traces with the real OTel SDK
(BatchSpanProcessor → OTLP/HTTP): mostly production traffic, a share of experiment runs, errors and
empty retrievals (triggers). Every ``--every`` seconds it reads ``/metrics``, DuckDB's own memory
(``duckdb_memory()`` through the SQL API) and the server's RSS (/proc), prints a line, and at the end
prints figures (per minute: first / last / max of cheap-tier lag and RSS) and writes
``bench/results/soak.{png,json}``. Needs the ``bench`` extra (matplotlib) for the plot.

The judge answers two tasks a soak trace (claims, refusal; no gold cases, no citations), one after
the other, so it judges about ``concurrency / (2 × latency)`` traces a second; with the defaults
that is well below the sampled rate, so the queue fills to its cap and the rest is shed
(``over_budget``, reason ``backlog``) while the cheap tier keeps up with every trace.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.judge_server import JudgeServer  # noqa: E402
from tests.otel_helpers import http_provider  # noqa: E402
from tests.served import Collector  # noqa: E402
from tests.tracegen import rag_trace  # noqa: E402

WORDS = [
    "refund",
    "policy",
    "shipping",
    "warranty",
    "invoice",
    "account",
    "password",
    "delivery",
    "return",
    "exchange",
    "order",
]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def tree_rss_mb(pid: int) -> float:
    """RSS of the process and its descendants (decode workers, if any)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += rss_mb(p)
        except OSError:
            continue
        todo.extend(children.get(p, []))
    return total


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def metric(text: str, name: str, labels: str | None = None) -> float:
    pat = re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else "") + r" ([0-9.eE+-]+)$"
    m = re.search(pat, text, re.M)
    return float(m.group(1)) if m else 0.0


def traffic(url: str, rate: float, stop: threading.Event, sent: list[int], seed: int = 1) -> None:
    rng = random.Random(seed)
    provider = http_provider(url, service="soak-app", batch=True)
    tracer = provider.get_tracer("bench.soak")
    t0 = time.monotonic()
    n = 0
    while not stop.is_set():
        due = t0 + n / rate
        delay = due - time.monotonic()
        if delay > 0:
            stop.wait(delay)
            continue
        q = " ".join(rng.choice(WORDS) for _ in range(6))
        docs = [
            {"id": f"doc-{rng.randrange(500)}", "content": f"{q} — passage {i} " + " ".join(rng.choice(WORDS) for _ in range(40)),
             "score": round(1 - i * 0.1, 2)}
            for i in range(5)
        ]  # fmt: skip
        roll = rng.random()
        rag_trace(
            tracer, query=q, answer=f"Per the {q}, the answer is {rng.randrange(100)} days.",
            candidates=[] if roll < 0.02 else docs, reranked=None if roll < 0.02 else docs[:3],
            run_id="soak-exp" if 0.02 <= roll < 0.07 else None, error=0.07 <= roll < 0.09,
        )  # fmt: skip
        n += 1
        sent[0] = n
    provider.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=6.0)
    ap.add_argument("--rate", type=float, default=20.0, help="traces per second")
    ap.add_argument(
        "--sample-rate", type=float, default=0.1, help="production sampling rate of the judge tier"
    )
    ap.add_argument("--judge-latency", type=float, default=1.0, help="seconds per judge call")
    ap.add_argument("--judge-concurrency", type=int, default=2, help="[judge] concurrency")
    ap.add_argument("--judge-queue-max", type=int, default=40, help="[sampling] judge_queue_max")
    ap.add_argument("--judge-max-wait", type=float, default=90.0, help="[sampling] judge_max_wait_seconds")
    ap.add_argument("--judge-batch", type=int, default=8, help="[sampling] judge_batch_size")
    ap.add_argument("--memory-limit", default="512MB", help="[server] memory_limit (DuckDB)")
    ap.add_argument("--every", type=float, default=5.0, help="sampling interval of the figures")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="where soak.png and soak.json go")
    ap.add_argument("--replot", metavar="SOAK_JSON", help="no run: redo figures and plot from a soak.json")
    args = ap.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        saved = json.loads(Path(args.replot).read_text(encoding="utf-8"))
        st = saved["settings"]
        for k, a in (("rate_traces_per_s", "rate"), ("minutes", "minutes"), ("sample_rate", "sample_rate"),
                     ("judge_latency_s", "judge_latency"), ("judge_concurrency", "judge_concurrency"),
                     ("judge_queue_max", "judge_queue_max"), ("judge_max_wait_s", "judge_max_wait"),
                     ("judge_batch_size", "judge_batch"), ("memory_limit", "memory_limit")):  # fmt: skip
            setattr(args, a, st[k])
        report(saved["samples"], args, out, saved["info"])
        return 0
    work = Path(tempfile.mkdtemp(prefix="ragfault-soak-"))
    samples: list[dict[str, Any]] = []
    info: dict[str, Any] = {"loadavg_start": Path("/proc/loadavg").read_text().split()[:3]}
    with JudgeServer(latency=args.judge_latency) as judge:
        cfg = work / "soak.toml"
        cfg.write_text(
            f'[server]\nmemory_limit = "{args.memory_limit}"\n'
            "[sampling]\n"
            f"production_rate = {args.sample_rate}\n"
            f"judge_queue_max = {args.judge_queue_max}\njudge_max_wait_seconds = {args.judge_max_wait}\n"
            f"judge_batch_size = {args.judge_batch}\n"
            "[judge]\n"
            f'base_url = "{judge.url}"\nmodel = "bench-judge"\nconcurrency = {args.judge_concurrency}\n'
            "cost_per_1k_input = 0.00015\ncost_per_1k_output = 0.0006\ntimeout_s = 30\n",
            encoding="utf-8",
        )
        env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        server = Collector(
            ["--db", str(work / "soak.duckdb"), "--settle-seconds", "2", "--config", str(cfg)],
            work / "server.log", env, cwd=ROOT,
        )  # fmt: skip
        proc, url = server.proc, server.url
        try:
            server.wait_ready(60)
            client = httpx.Client(base_url=url, timeout=10)
            info["rss_mb_idle"] = round(rss_mb(proc.pid), 1)
            stop = threading.Event()
            sent = [0]
            sender = threading.Thread(target=traffic, args=(url, args.rate, stop, sent), daemon=True)
            t0 = time.monotonic()
            sender.start()
            print(
                f"soak: {args.rate:g} traces/s for {args.minutes:g} min, sample rate {args.sample_rate:g}, "
                f"judge latency {args.judge_latency:g}s x{args.judge_concurrency}, queue max "
                f"{args.judge_queue_max}, max wait {args.judge_max_wait:g}s, DuckDB memory_limit "
                f"{args.memory_limit}; server pid {proc.pid}, load {' '.join(info['loadavg_start'])}"
            )
            print(
                f"{'t_s':>6} {'sent':>6} {'lag_s':>6} {'wait':>5} {'jq':>4} {'jlag_s':>6} {'judged':>6} "
                f"{'shed':>5} {'s_out':>6} {'calls':>6} {'rss_mb':>7} {'tree':>7} {'duck':>6} {'load':>5}"
            )
            end = t0 + args.minutes * 60
            while time.monotonic() < end:
                time.sleep(args.every)
                text = client.get("/metrics").text
                s = {
                    "t": round(time.monotonic() - t0, 1), "sent": sent[0],
                    "lag_s": metric(text, "ragfault_evaluation_lag_seconds"),
                    "waiting": metric(text, "ragfault_traces_waiting_evaluation"),
                    "judge_queue": metric(text, "ragfault_judge_queue_traces"),
                    "judge_lag_s": round(metric(text, "ragfault_judge_lag_seconds"), 1),
                    "judged": metric(text, "ragfault_sampling_decisions_total", 'decision="evaluated"'),
                    "sampled_out": metric(text, "ragfault_sampling_decisions_total", 'decision="sampled_out"'),
                    "over_budget": metric(text, "ragfault_sampling_decisions_total", 'decision="over_budget"'),
                    "judge_errors": metric(text, "ragfault_sampling_decisions_total", 'decision="error"'),
                    "judge_calls": metric(text, "ragfault_judge_calls_total"),
                    "judge_usd": metric(text, "ragfault_judge_spend_usd_total"),
                    "rss_mb": round(rss_mb(proc.pid), 1), "rss_tree_mb": round(tree_rss_mb(proc.pid), 1),
                    "duckdb_mb": duckdb_mb(client), "load1": loadavg(),
                }  # fmt: skip
                samples.append(s)
                print(
                    f"{s['t']:6.0f} {s['sent']:6d} {s['lag_s']:6.2f} {s['waiting']:5.0f} {s['judge_queue']:4.0f} "
                    f"{s['judge_lag_s']:6.1f} {s['judged']:6.0f} {s['over_budget']:5.0f} {s['sampled_out']:6.0f} "
                    f"{s['judge_calls']:6.0f} {s['rss_mb']:7.1f} {s['rss_tree_mb']:7.1f} {s['duckdb_mb']:6.1f} "
                    f"{s['load1']:5.2f}",
                    flush=True,
                )
            stop.set()
            sender.join(30)
            info["judge_server_requests"] = judge.requests
            info["judge_server_tasks"] = dict(judge.tasks)
            info["memory_by_tag_mb"] = duckdb_tags(client)
        finally:
            server.stop()
    info["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    report(samples, args, out, info)
    return 0


def _sql(client: httpx.Client, sql: str) -> list[list[Any]]:
    try:
        r = client.post("/api/v1/sql", json={"sql": sql})
        return r.json()["rows"] if r.status_code == 200 else []
    except (httpx.HTTPError, ValueError, KeyError):
        return []


def duckdb_mb(client: httpx.Client) -> float:
    """Memory DuckDB's buffer manager accounts for (``duckdb_memory()``), in MB."""
    rows = _sql(client, "SELECT sum(memory_usage_bytes) FROM duckdb_memory()")
    return round(float(rows[0][0] or 0) / 2**20, 1) if rows else float("nan")


def duckdb_tags(client: httpx.Client) -> dict[str, float]:
    rows = _sql(client, "SELECT tag, memory_usage_bytes FROM duckdb_memory() WHERE memory_usage_bytes > 0")
    return {str(t): round(float(b) / 2**20, 1) for t, b in rows}


def per_minute(samples: list[dict[str, Any]], key: str) -> list[dict[str, float]]:
    out = []
    for m in range(int(samples[-1]["t"] // 60) + 1):
        rows = [r[key] for r in samples if m * 60 < r["t"] <= (m + 1) * 60]
        if rows:
            out.append({"minute": m + 1, "first": rows[0], "last": rows[-1], "max": max(rows)})
    return out


def report(samples: list[dict[str, Any]], args: argparse.Namespace, out: Path, info: dict[str, Any]) -> None:
    if not samples:
        return
    last = samples[-1]
    settings = {
        "rate_traces_per_s": args.rate, "minutes": args.minutes, "sample_rate": args.sample_rate,
        "judge_latency_s": args.judge_latency, "judge_concurrency": args.judge_concurrency,
        "judge_queue_max": args.judge_queue_max, "judge_max_wait_s": args.judge_max_wait,
        "judge_batch_size": args.judge_batch, "memory_limit": args.memory_limit,
    }  # fmt: skip
    summary = {
        "traces_sent": last["sent"], "lag_s_max": max(r["lag_s"] for r in samples),
        "judge_queue_max_seen": max(r["judge_queue"] for r in samples),
        "judge_lag_s_max": max(r["judge_lag_s"] for r in samples),
        "rss_mb_idle": info.get("rss_mb_idle"), "rss_mb_first": samples[0]["rss_mb"],
        "rss_mb_last": last["rss_mb"], "rss_mb_max": max(r["rss_mb"] for r in samples),
        "duckdb_mb_max": max(r["duckdb_mb"] for r in samples),
        "judged": last["judged"], "over_budget": last["over_budget"], "sampled_out": last["sampled_out"],
        "judge_errors": last["judge_errors"], "judge_calls": last["judge_calls"], "judge_usd": last["judge_usd"],
    }  # fmt: skip
    minutes = {k: per_minute(samples, k) for k in ("lag_s", "rss_mb", "judge_queue", "judge_lag_s")}
    print("\nfigures:")
    for k, v in {**settings, **summary, **info}.items():
        print(f"  {k:>24}: {v}")
    print("\nper minute (first / last / max):")
    print(f"  {'min':>3} {'lag_s':>20} {'rss_mb':>24} {'judge_queue':>14} {'judge_lag_s':>18}")
    for i, lag in enumerate(minutes["lag_s"]):
        rss, jq, jl = minutes["rss_mb"][i], minutes["judge_queue"][i], minutes["judge_lag_s"][i]
        print(
            f"  {lag['minute']:>3} {lag['first']:6.2f} {lag['last']:6.2f} {lag['max']:6.2f} "
            f"{rss['first']:7.1f} {rss['last']:7.1f} {rss['max']:7.1f} {jq['first']:4.0f} {jq['last']:4.0f} "
            f"{jq['max']:4.0f} {jl['first']:5.1f} {jl['last']:5.1f} {jl['max']:5.1f}"
        )
    (out / "soak.json").write_text(
        json.dumps(
            {
                "settings": settings,
                "summary": summary,
                "info": info,
                "per_minute": minutes,
                "samples": samples,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install .[bench]): no plot")
        return
    ts = [r["t"] for r in samples]
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(7, 6.5), dpi=100, sharex=True)
    a1.plot(ts, [r["lag_s"] for r in samples], color="tab:blue")
    a1.set_ylabel("cheap-tier lag (s)")
    a1.set_ylim(0, max(5.0, summary["lag_s_max"] * 1.2))
    a2.plot(ts, [r["rss_mb"] for r in samples], color="tab:red", label="server RSS")
    a2.plot(ts, [r["duckdb_mb"] for r in samples], color="tab:gray", ls="--", label="DuckDB duckdb_memory()")
    a2.set_ylabel("MB")
    a2.set_ylim(bottom=0)
    a2.legend(loc="lower right", fontsize=8)
    a3.plot(ts, [r["judge_queue"] for r in samples], color="tab:green", label="judge queue (traces)")
    a3.axhline(args.judge_queue_max, color="tab:green", ls=":", lw=1)
    a3.plot(ts, [r["judge_lag_s"] for r in samples], color="tab:purple", label="judge lag (s)")
    a3.set_ylabel("judge queue / lag")
    a3.set_xlabel("time (s)")
    a3.set_ylim(0, max(args.judge_queue_max, summary["judge_lag_s_max"]) * 1.6)
    a4 = a3.twinx()
    a4.plot(ts, [r["over_budget"] for r in samples], color="tab:orange", label="shed (over_budget, total)")
    a4.plot(ts, [r["judged"] for r in samples], color="tab:olive", ls="--", label="judged (total)")
    a4.set_ylabel("traces (cumulative)")
    a4.set_ylim(bottom=0)
    h3, l3 = a3.get_legend_handles_labels()
    h4, l4 = a4.get_legend_handles_labels()
    a3.legend(h3 + h4, l3 + l4, loc="upper left", fontsize=7, ncol=2)
    a1.set_title(
        f"soak: {args.rate:g} traces/s, judge sample {args.sample_rate:g}, judge {args.judge_latency:g}s/call "
        f"x{args.judge_concurrency}, queue {args.judge_queue_max}, DuckDB {args.memory_limit}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out / "soak.png")
    print(f"plot: {out / 'soak.png'}")


if __name__ == "__main__":
    raise SystemExit(main())
