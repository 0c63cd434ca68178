"""Soak: RAG-shaped traffic at a steady rate for minutes, sampling on, a slow judge; watch lag and RSS.

    python -m bench.soak --minutes 3 --rate 20 --judge-latency 1.0

Starts the local OpenAI-compatible judge server (``bench.judge_server``, with added latency) and a
``ragfault serve`` subprocess whose config turns sampling on (production rate ``--sample-rate``,
experiment traffic in full, triggers on) with ``bench.minimal_judge`` as the judge runner. Sends
traces with the real OTel SDK (BatchSpanProcessor → OTLP/HTTP): mostly production traffic, a share
of experiment runs, errors and empty retrievals (triggers). Every ``--every`` seconds it reads
``/metrics`` and the server's RSS (/proc), prints a line, and at the end prints figures and writes
``bench/results/soak.{png,json}``. Needs the ``bench`` extra (matplotlib) for the plot.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


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
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--rate", type=float, default=20.0, help="traces per second")
    ap.add_argument(
        "--sample-rate", type=float, default=0.1, help="production sampling rate of the judge tier"
    )
    ap.add_argument("--judge-latency", type=float, default=1.0, help="seconds per judge call")
    ap.add_argument("--judge-concurrency", type=int, default=2)
    ap.add_argument("--every", type=float, default=5.0, help="sampling interval of the figures")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="where soak.png and soak.json go")
    args = ap.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="ragfault-soak-"))
    samples: list[dict[str, Any]] = []
    with JudgeServer(latency=args.judge_latency) as judge:
        cfg = work / "soak.toml"
        cfg.write_text(
            "[sampling]\n"
            f"production_rate = {args.sample_rate}\n"
            'judge_factory = "bench.minimal_judge:build_judge_runner"\n'
            "judge_queue_max = 500\njudge_max_wait_seconds = 120\njudge_batch_size = 8\n"
            "[bench_judge]\n"
            f'base_url = "{judge.url}"\nconcurrency = {args.judge_concurrency}\n',
            encoding="utf-8",
        )
        http_port, grpc_port = free_port(), free_port()
        url = f"http://127.0.0.1:{http_port}"
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        log = open(work / "server.log", "w")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragfault.cli", "serve", "--db", str(work / "soak.duckdb"), "--http-port",
             str(http_port), "--grpc-port", str(grpc_port), "--settle-seconds", "2", "--config", str(cfg)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            client = httpx.Client(base_url=url, timeout=10)
            deadline = time.monotonic() + 60
            while True:
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"server did not start; see {work / 'server.log'}")
                time.sleep(0.2)
            stop = threading.Event()
            sent = [0]
            sender = threading.Thread(target=traffic, args=(url, args.rate, stop, sent), daemon=True)
            t0 = time.monotonic()
            sender.start()
            print(
                f"soak: {args.rate:g} traces/s for {args.minutes:g} min, sample rate {args.sample_rate:g}, "
                f"judge latency {args.judge_latency:g}s x{args.judge_concurrency}; server pid {proc.pid}"
            )
            print(
                f"{'t_s':>6} {'sent':>6} {'lag_s':>7} {'waiting':>7} {'judge_q':>7} {'judged':>7} "
                f"{'shed':>5} {'calls':>6} {'usd':>8} {'rss_mb':>7}"
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
                    "judged": metric(text, "ragfault_sampling_decisions_total", 'decision="evaluated"'),
                    "sampled_out": metric(text, "ragfault_sampling_decisions_total", 'decision="sampled_out"'),
                    "over_budget": metric(text, "ragfault_sampling_decisions_total", 'decision="over_budget"'),
                    "judge_calls": metric(text, "ragfault_judge_calls_total"),
                    "judge_usd": metric(text, "ragfault_judge_spend_usd_total"),
                    "rss_mb": round(rss_mb(proc.pid), 1),
                }  # fmt: skip
                samples.append(s)
                print(
                    f"{s['t']:6.0f} {s['sent']:6d} {s['lag_s']:7.2f} {s['waiting']:7.0f} {s['judge_queue']:7.0f} "
                    f"{s['judged']:7.0f} {s['over_budget']:5.0f} {s['judge_calls']:6.0f} {s['judge_usd']:8.4f} "
                    f"{s['rss_mb']:7.1f}",
                    flush=True,
                )
            stop.set()
            sender.join(30)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
    report(samples, args, out)
    return 0


def report(samples: list[dict[str, Any]], args: argparse.Namespace, out: Path) -> None:
    if not samples:
        return
    half = len(samples) // 2
    first, second = samples[:half] or samples, samples[half:]

    def mean(rows: list[dict[str, Any]], k: str) -> float:
        return sum(r[k] for r in rows) / len(rows)

    last = samples[-1]
    summary = {
        "rate_traces_per_s": args.rate, "minutes": args.minutes, "sample_rate": args.sample_rate,
        "judge_latency_s": args.judge_latency, "traces_sent": last["sent"],
        "lag_s_mean_first_half": round(mean(first, "lag_s"), 2), "lag_s_mean_second_half": round(mean(second, "lag_s"), 2),
        "lag_s_max": max(r["lag_s"] for r in samples),
        "rss_mb_first": samples[0]["rss_mb"], "rss_mb_mean_first_half": round(mean(first, "rss_mb"), 1),
        "rss_mb_mean_second_half": round(mean(second, "rss_mb"), 1), "rss_mb_max": max(r["rss_mb"] for r in samples),
        "judged": last["judged"], "sampled_out": last["sampled_out"], "over_budget": last["over_budget"],
        "judge_calls": last["judge_calls"], "judge_usd": last["judge_usd"],
    }  # fmt: skip
    print("\nfigures:")
    for k, v in summary.items():
        print(f"  {k:>26}: {v}")
    (out / "soak.json").write_text(
        json.dumps({"summary": summary, "samples": samples}, indent=1), encoding="utf-8"
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install .[bench]): no plot")
        return
    fig, ax1 = plt.subplots(figsize=(7, 3.5), dpi=110)
    ts = [r["t"] for r in samples]
    ax1.plot(ts, [r["lag_s"] for r in samples], color="tab:blue", label="evaluation lag (s)")
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("evaluation lag (s)", color="tab:blue")
    ax1.set_ylim(bottom=0)
    ax2 = ax1.twinx()
    ax2.plot(ts, [r["rss_mb"] for r in samples], color="tab:red", label="server RSS (MB)")
    ax2.set_ylabel("server RSS (MB)", color="tab:red")
    ax2.set_ylim(bottom=0)
    ax1.set_title(
        f"soak: {args.rate:g} traces/s, judge sample {args.sample_rate:g}, judge {args.judge_latency:g}s/call"
    )
    fig.tight_layout()
    fig.savefig(out / "soak.png")
    print(f"plot: {out / 'soak.png'}")


if __name__ == "__main__":
    raise SystemExit(main())
