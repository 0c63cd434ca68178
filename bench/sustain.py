#!/usr/bin/env python
"""End to end at a steady rate: the highest rate at which one server stores every span and runs the
cheap tier on every trace, continuously, on this machine.

``bench/ingest.py`` measures storing alone (settling deferred) and ``bench/evaluate.py`` evaluating a
stored backlog alone. A running server does both on the same cores, all the time. For each rate of
``--rates`` (traces a second) this starts ``ragfault serve`` on a fresh database holding the
knowledge base and a gold case for every trace (``ragfault load``, before the server starts), then
sends the RAG-shaped traces of ``bench/evaluate.py`` (four spans each: root, retriever with 20
documents, reranker keeping 5, LLM call) as OTLP/HTTP protobuf requests on a fixed schedule for
``--seconds``, from request bodies built beforehand (the sender costs little CPU): one request every
``--request-interval`` seconds, or requests of ``--per-request`` traces (128 is what an application
exporting through the SDK's ``BatchSpanProcessor`` sends once traffic fills its 512-span batches, and
the writer's fixed cost a commit is then shared by four times more traces than at 300 traces a second
in requests a tenth of a second apart). First, ``--warmup``
seconds of the same traffic are sent and evaluated outside the measured window: what a running
server does once (starting its decode and evaluation workers, their imports, their first look at the
knowledge base) is not spread over the measured traces. Traces settle
after ``--settle-seconds`` without new spans; ``[evaluation] workers`` runs the cheap tier. While it
runs, ``/metrics`` is read every half second.

Per rate it prints:

- **sent**: traces a second the schedule achieved (the sender falls behind only when the server
  holds requests back: 503 or 429, which are re-sent after ``Retry-After``);
- **stored**: spans a second stored over the sending window (``ragfault_spans_stored_total``);
- **evaluated**: traces a second the cheap tier finished over the second half of the sending window
  (``ragfault_traces_evaluated_total``), once settling and the pool are under way;
- **lag at end**: ``ragfault_evaluation_lag_seconds`` when the last request was sent (the oldest
  settled trace still waiting) and ``ragfault_settle_lag_seconds`` (the oldest complete trace not
  assembled yet, held back while ingest is under pressure), and **behind at end**: the traces sent
  but not yet evaluated then;
- **drain**: seconds from the last request until every trace was evaluated;
- **CPU a trace**: the server's process tree (decode and evaluation workers included) over the
  measured window, start of its sending (after the warm-up) to the last trace evaluated;
- **the store**: the file's bytes after the server stopped, over every trace it holds (printed under
  the row; the registry and the gold cases are in it too).

A rate is kept up with when the evaluated rate of the second half is at least 95 % of the sent rate,
both lags at the end stay under ``--settle-seconds`` + 5 s and the traces behind at the end are no
more than ``--settle-seconds`` + 3 s of traffic: the backlog is not growing, nor evaluated in bursts.

A collector that has run for hours holds far more than one run sends: ``--prefill N`` starts each
rate on a copy of a store that already holds N traces of the same shape (other trace ids and gold
cases, the same registry), sent, stored and evaluated by the measured server itself beforehand and
checkpointed as it stopped; it is built once a set of arguments and kept in ``--prefill-dir``.
``--prefill-store PATH`` starts each rate on a copy of a store built elsewhere instead (``bench/scale.py
--keep``: a month of a million traces, written through the store's writer, which the server would take
about 40 minutes to ingest), with this run's registry and gold cases loaded into it.

Where the CPU goes: ``--profile`` records the server and its workers with py-spy (installed into the
venv) and prints CPU µs a trace by stage (each thread's CPU time from /proc, split over the stages of
its samples); ``--stages N`` runs the server's path for N traces on one thread instead of a server
(decode, span inserts, settling, evaluation with a worker's functions, verdict writes, checkpoints)
and prints the CPU µs a trace of each stage (on a copy of ``--prefill-store`` when given).

Run from the project root:

    .venv/bin/python bench/sustain.py                      # 400, 800, 1200 traces/s, 30 s each
    .venv/bin/python bench/sustain.py --rates 900,1000,1100 --seconds 60
    .venv/bin/python bench/sustain.py --rates 400 --profile
    .venv/bin/python bench/sustain.py --rates 400 --per-request 128 --prefill 300000   # a store in use
    .venv/bin/python bench/sustain.py --rates 600 --prefill-store scale-1m.duckdb      # a month in use
    .venv/bin/python bench/sustain.py --stages 2000
    .venv/bin/python bench/sustain.py --rates 300 --server-python ../base/.venv/bin/python   # another tree

Results are printed and written to bench/results/sustain.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from bench.evaluate import export_requests, make_kb  # noqa: E402  (the same traces and cases)
from bench.ingest import (  # noqa: E402
    Exporter,
    MemWatch,
    Sampler,
    SendStats,
    _cpu_ticks,
    _settings,
    _tree,
    ragfault_bin,
    start_ragfault,
    stop_process,
)


def start_pyspy(pid: int, out: Path, rate: int) -> subprocess.Popen | None:
    """py-spy recording the server and its worker processes (raw stacks, every thread), or None
    when py-spy is not installed (``pip install py-spy`` into the venv)."""
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(exe).exists():
        print("py-spy not found; install it into the venv to profile", file=sys.stderr)
        return None
    cmd = [exe, "record", "--pid", str(pid), "--format", "raw", "--threads", "--subprocesses",
           "--rate", str(rate), "-o", str(out)]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# A sample's stage: the first rule whose function names are all in its stack (after the thread),
# within that kind of thread ("worker": a process under the server's, "writer", "settler",
# "evaluator", or any other thread of the server). Function names as py-spy prints them.
_STAGE_RULES: list[tuple[str, str, tuple[str, ...]]] = [
    # decode workers first: both pools' task functions are called ``_work``
    ("worker", "ingest: decode workers", ("decode_to_arrow",)),
    ("worker", "evaluate: workers (views, evaluators, rows)", ("evaluate_tables",)),
    ("worker", "workers: other (start-up, IPC)", ()),
    ("writer", "writer: checkpoints", ("checkpoint_if_idle",)),
    ("writer", "ingest: span inserts (writer)", ("write_spans",)),
    ("writer", "settle: write (writer)", ("write_settled",)),
    ("writer", "evaluate: verdict write (writer)", ("write_verdicts",)),
    ("writer", "evaluate: eval_log, feedback (writer)", ()),
    ("settler", "settle: fetch (steps, documents, content fills)", ("load_trace_parts",)),
    ("settler", "settle: fetch (steps, documents, content fills)", ("load_fills",)),
    ("settler", "settle: assemble (Python)", ("_run_once",)),
    ("settler", "settle: ready look-ups and gauges", ()),
    ("evaluator", "evaluate: fetch (traces, steps, documents)", ("fetch_traces",)),
    ("evaluator", "evaluate: in the server process", ("evaluate_tables",)),
    ("evaluator", "evaluate: in the server process", ("build_tables",)),
    ("evaluator", "evaluate: in the server process", ("load",)),
    ("evaluator", "evaluate: hand-off to workers", ("submit",)),
    ("evaluator", "evaluate: queue, feedback, sampling, gauges", ()),
    ("eval-io", "evaluate: hand-off to workers", ()),
    ("decode-io", "ingest: receive and decode", ()),
    ("other", "ingest: receive and decode", ()),
]


def _thread_kind(name: str, in_worker: bool) -> str:
    if in_worker:
        return "worker"
    for kind in ("writer", "settler", "evaluator", "eval-io", "decode-io"):
        if f"ragfault-{kind}" in name:
            return kind
    return "other"


def _task_ticks(pid: int) -> dict[int, int]:
    """utime + stime of each live thread of a process, in clock ticks."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            out[int(tid)] = int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return out


class ThreadWatch(Sampler):
    """The CPU time each thread of the server's process tree used since ``start`` (sampled every
    0.2 s; a thread that ended keeps what it had at the last sample), and each process's total (it
    counts ended threads too)."""

    def __init__(self, pid: int) -> None:
        super().__init__()
        self.pid = pid
        self.base: dict[tuple[int, int], int] = {}
        self.last: dict[tuple[int, int], int] = {}
        self.proc_base: dict[int, int] = {}
        self.proc_last: dict[int, int] = {}
        self._first = True

    def sample(self) -> None:
        for p in _tree(self.pid):
            ticks = _cpu_ticks(p)
            self.proc_last[p] = max(self.proc_last.get(p, 0), ticks)
            if self._first:
                self.proc_base[p] = ticks
            for tid, t in _task_ticks(p).items():
                key = (p, tid)
                self.last[key] = max(self.last.get(key, 0), t)
                if self._first:
                    self.base[key] = t
        self._first = False

    def seconds(self) -> tuple[dict[tuple[int, int], float], dict[int, float]]:
        """CPU seconds by (pid, tid) and by pid."""
        hz = os.sysconf("SC_CLK_TCK")
        threads = {k: (v - self.base.get(k, 0)) / hz for k, v in self.last.items()}
        procs = {p: (v - self.proc_base.get(p, 0)) / hz for p, v in self.proc_last.items()}
        return threads, procs


_FRAME_PID = re.compile(r"^process (\d+):")
_FRAME_TID = re.compile(r"^thread \((?:0x)?([0-9a-fA-F]+)\)")


# Where a sample's innermost frame is one of these, the thread was blocked, not running: py-spy
# (without --idle) still records threads waiting in Python-level waits.
_WAIT_FRAMES = re.compile(r"^\S+ \((?:threading|selectors|queue|multiprocessing/connection)\.py:\d+\)$")


def _waiting(frame: str) -> bool:
    return _WAIT_FRAMES.match(frame) is not None


def stages(path: Path, cpu: ThreadWatch, n_traces: int) -> dict[str, float]:
    """CPU µs a trace by stage: each thread's CPU time (``ThreadWatch``) split over the stages of
    its py-spy samples (``_STAGE_RULES``) that were not blocked in a wait (``_waiting``); a worker
    process's whole CPU time over its samples'. Threads py-spy never saw (DuckDB's own, threads that ended) are counted apart."""
    per_thread: dict[tuple[int, int], dict[str, int]] = {}
    worker_pids: set[int] = set()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        heads = [i for i, f in enumerate(frames) if f.startswith("thread (")]
        if not heads:
            continue
        pids = [m.group(1) for f in frames[: heads[0]] if (m := _FRAME_PID.match(f))]
        tid_m = _FRAME_TID.match(frames[heads[0]])
        if not pids or tid_m is None:
            continue
        pid, in_worker = int(pids[-1]), len(pids) > 1
        tid = int(tid_m.group(1), 16 if frames[heads[0]].startswith("thread (0x") else 10)
        if in_worker:
            worker_pids.add(pid)
        if _waiting(frames[-1]):
            continue  # a thread blocked on a lock, an event or a selector spends no CPU there
        kind = _thread_kind(frames[heads[0]], in_worker)
        names = {f.split(" (", 1)[0].rsplit(".", 1)[-1] for f in frames[heads[0] + 1 :]}
        for k, stage, need in _STAGE_RULES:
            if k == kind and all(x in names for x in need):
                counts = per_thread.setdefault((pid, tid), {})
                counts[stage] = counts.get(stage, 0) + int(n)
                break
    threads, procs = cpu.seconds()
    out: dict[str, float] = {}

    def add(stage: str, seconds: float) -> None:
        out[stage] = out.get(stage, 0.0) + seconds

    by_pid: dict[int, dict[str, int]] = {}
    for (pid, _tid), counts in per_thread.items():
        if pid in worker_pids:
            agg = by_pid.setdefault(pid, {})
            for st, c in counts.items():
                agg[st] = agg.get(st, 0) + c
    for pid, secs in procs.items():
        if pid in by_pid:  # a worker: all of its time, in the shares of its samples
            total = sum(by_pid[pid].values())
            for st, c in by_pid[pid].items():
                add(st, secs * c / total)
        elif pid == cpu.pid:
            seen = 0.0
            for (p, tid), t in threads.items():
                if p != pid:
                    continue
                counts = per_thread.get((p, tid))
                if not counts:
                    add("server: threads py-spy did not see (DuckDB's own)", t)
                else:
                    total = sum(counts.values())
                    for st, c in counts.items():
                        add(st, t * c / total)
                seen += t
            add("server: threads that ended", max(0.0, secs - seen))
        else:
            add("workers: other (start-up, forkserver)", secs)
    us = 1e6 / max(n_traces, 1)
    return {k: v * us for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")


def _write_refs(workdir: Path, kb: list[dict], cases: list[dict]) -> None:
    """The registry (its public fields) and the gold cases as ``kb.jsonl`` and ``gold.jsonl``."""
    _write_jsonl(workdir / "kb.jsonl", [{k: v for k, v in d.items() if not k.startswith("_")} for d in kb])
    _write_jsonl(workdir / "gold.jsonl", cases)


def stored_traces(db: Path) -> int:
    """How many traces the store file holds (read after the server stopped)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM traces").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


def _load_refs(args: argparse.Namespace, workdir: Path, db: Path, kinds: tuple[str, ...]) -> None:
    """``ragfault load`` of ``workdir``'s JSONL files (``kb``, ``gold``) into ``db``."""
    for kind in kinds:
        subprocess.run(
            server_bin(args) + ["load", kind, str(workdir / f"{kind}.jsonl"), "--db", str(db),
                                "--server", "http://127.0.0.1:9"],  # never a server that happens to run
            check=True, capture_output=True, cwd=workdir,
        )  # fmt: skip


def build(
    n_traces: int,
    per_request: int,
    kb_docs: int,
    seed: int,
    workdir: Path,
    start: int = 0,
    *,
    key_sentences: bool = False,
    system_copies: int = 4,
) -> list[bytes]:
    """Request bodies of ``n_traces`` traces (numbered from ``start``: after a prefilled store's), and
    the registry and gold cases written as JSONL files into ``workdir`` (kb.jsonl, gold.jsonl).
    ``key_sentences``: every registry document is its key sentence alone (which every quote and fact
    of the gold cases is taken from); ``system_copies``: how many times the LLM call's system message
    repeats the system prompt (``evaluate.rag_trace``). Neither changes the random draws."""
    rng = random.Random(seed)
    kb = make_kb(rng, kb_docs)
    if key_sentences:
        for doc in kb:
            doc["content"] = doc["_key"]
    t0 = time.time_ns()
    bodies: list[bytes] = []
    cases: list[dict] = []
    for req, req_cases in export_requests(rng, kb, n_traces, per_request, t0, start, system_copies):
        bodies.append(req.SerializeToString())
        cases.extend(req_cases)
    _write_refs(workdir, kb, cases)
    return bodies


PREFILL_PER_REQUEST = 128


def prefill_path(args: argparse.Namespace) -> Path:
    """Where the prefilled store of these arguments is kept between runs (``--prefill-dir``)."""
    tree = "this" if not args.server_python else re.sub(r"\W+", "_", str(Path(args.server_python).resolve()))
    name = f"prefill-{args.prefill}-kb{args.kb_docs}-seed{args.seed}-{tree}.duckdb"
    return Path(args.prefill_dir) / name


def prefill(args: argparse.Namespace) -> Path:
    """A store that already holds ``--prefill`` traces of the same shape (their own trace ids and gold
    cases, the same registry), stored, settled and evaluated by the measured server itself and
    checkpointed as it stopped: what a collector that has run for a while holds. Built once a set of
    arguments and kept in ``--prefill-dir``; a run starts on a copy."""
    path = prefill_path(args)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    kb = make_kb(random.Random(args.seed), args.kb_docs)
    rng = random.Random(args.seed + 1_000_003)  # other trace ids than the measured traffic's
    with tempfile.TemporaryDirectory(prefix="ragfault-prefill-", dir=path.parent) as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        bodies_file = work / "bodies.bin"  # length-prefixed request bodies: too many to hold in memory
        cases: list[dict] = []
        with bodies_file.open("wb") as fh:
            for req, req_cases in export_requests(rng, kb, args.prefill, PREFILL_PER_REQUEST, time.time_ns()):
                body = req.SerializeToString()
                fh.write(len(body).to_bytes(4, "little") + body)
                cases.extend(req_cases)
        _write_refs(work, kb, cases)
        db = work / "bench.duckdb"
        create_db(args, db)
        _load_refs(args, work, db, ("kb", "gold"))
        print(
            f"prefill: {args.prefill:,} traces built and their cases loaded in {time.perf_counter() - t:.0f} s"
        )
        proc, port, log = start_ragfault(work, server_config(args), server_bin(args))
        try:
            t = time.perf_counter()
            stats, lock = SendStats(), threading.Lock()
            with bodies_file.open("rb") as fh:

                def run() -> None:
                    exporter = Exporter(port, stats, lock)
                    while True:
                        with lock:
                            head = fh.read(4)
                            body = fh.read(int.from_bytes(head, "little")) if head else b""
                        if not body:
                            break
                        exporter.post(body)
                    exporter.close()

                pool = [threading.Thread(target=run, daemon=True) for _ in range(args.threads)]
                for th in pool:
                    th.start()
                for th in pool:
                    th.join()
            sent_s = time.perf_counter() - t
            deadline = time.monotonic() + max(args.drain_timeout, args.prefill / 100)
            while time.monotonic() < deadline and read_metrics(port)["evaluated"] < args.prefill:
                time.sleep(1.0)
            done = read_metrics(port)["evaluated"]
            if done < args.prefill:
                raise SystemExit(f"prefill: only {done:,.0f} of {args.prefill:,} traces evaluated; see {log}")
            print(f"prefill: sent in {sent_s:.0f} s, evaluated in {time.perf_counter() - t:.0f} s")
        finally:
            stop_process(proc, grace=600)  # a clean stop checkpoints the WAL into the file
        if Path(str(db) + ".wal").exists():
            raise SystemExit(f"prefill: the server left a WAL behind; see {log}")
        shutil.move(str(db), path)
    print(f"prefill: {path} ({path.stat().st_size / 2**20:,.0f} MiB)")
    return path


@dataclass
class Sent(SendStats):
    first: float = 0.0  # when the schedule started
    max_late_s: float = 0.0  # how far the sender fell behind its schedule


def send_paced(port: int, bodies: list[bytes], interval: float, threads: int) -> Sent:
    """POST body i at start + i·interval (each thread takes the next one due; ``Exporter``)."""
    out = Sent()
    lock = threading.Lock()
    nxt = iter(range(len(bodies)))
    start = time.monotonic() + 0.2
    out.first = start

    def run() -> None:
        exporter = Exporter(port, out, lock)
        while True:
            with lock:
                i = next(nxt, None)
            if i is None:
                break
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                with lock:
                    out.max_late_s = max(out.max_late_s, -delay)
            exporter.post(bodies[i])
        exporter.close()

    pool = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return out


_WANTED = {
    "stored": "ragfault_spans_stored_total",
    "evaluated": 'ragfault_traces_evaluated_total{tier="cheap"}',
    "waiting": "ragfault_traces_waiting_evaluation",
    "lag": "ragfault_evaluation_lag_seconds",
    "settle_lag": "ragfault_settle_lag_seconds",
    "waiting_settle": "ragfault_traces_waiting_settle",
    "checkpoints": "ragfault_checkpoint_seconds_count",
    "checkpoint_s": "ragfault_checkpoint_seconds_sum",
    "checkpoint_max_s": "ragfault_checkpoint_seconds_max",
}


def read_metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        text = r.read().decode()
    out = {}
    for key, name in _WANTED.items():
        m = re.search("^" + re.escape(name) + r" ([0-9.eE+-]+)$", text, re.M)
        out[key] = float(m.group(1)) if m else 0.0
    return out


def at(samples: list[dict[str, float]], t: float) -> dict[str, float]:
    """The last sample taken at or before ``t`` (the first one if none)."""
    best = samples[0]
    for s in samples:
        if s["t"] > t:
            break
        best = s
    return best


def server_bin(args: argparse.Namespace) -> list[str]:
    """The ``ragfault`` command measured: this environment's, or that of ``--server-python``."""
    if not args.server_python:
        return ragfault_bin()
    exe = Path(args.server_python).parent / "ragfault"
    return [str(exe)] if exe.exists() else [args.server_python, "-m", "ragfault.cli"]


def create_db(args: argparse.Namespace, db: Path) -> None:
    """An empty database made by the server's own code (its migrations), not necessarily this tree's."""
    python = args.server_python or sys.executable
    subprocess.run(
        [python, "-c", "import sys; from collector.store import Store; Store(sys.argv[1]).close()", str(db)],
        check=True, capture_output=True, cwd=db.parent,
    )  # fmt: skip


def server_config(args: argparse.Namespace) -> dict[str, object]:
    return {
        "settle_seconds": args.settle_seconds,
        "log_level": "warning",
        "evaluation.workers": args.workers,
        "sampling.production_rate": 0.0,
    } | _settings(args.set)


def run_rate(args: argparse.Namespace, rate: float) -> dict:
    per_request = args.per_request or max(1, int(round(rate * args.request_interval)))
    # the warm-up's requests come first; its traces are all sent and evaluated before the measured
    # window opens, so the workers have started and their caches hold the knowledge base
    n_warm = int(round(rate * args.warmup / per_request)) * per_request
    n_traces = int(rate * args.seconds)
    with tempfile.TemporaryDirectory(prefix="ragfault-sustain-") as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        bodies = build(n_warm + n_traces, per_request, args.kb_docs, args.seed, work, args.prefill)
        warm_bodies, bodies = bodies[: n_warm // per_request], bodies[n_warm // per_request :]
        build_s = time.perf_counter() - t
        db = work / "bench.duckdb"
        if args.prefill_store:
            shutil.copyfile(args.prefill_store, db)
            _load_refs(args, work, db, ("kb", "gold"))
        elif args.prefill:
            shutil.copyfile(prefill(args), db)  # the registry is in it already
            _load_refs(args, work, db, ("gold",))
        else:
            # `ragfault load` refuses a database file that does not exist (a mistyped --db)
            create_db(args, db)
            _load_refs(args, work, db, ("kb", "gold"))
        proc, port, log = start_ragfault(work, server_config(args), server_bin(args))
        samples: list[dict[str, float]] = []
        stop = threading.Event()
        # the counters when the measured window opened
        base = {"stored": 0.0, "evaluated": 0.0, "checkpoints": 0.0, "checkpoint_s": 0.0}

        def poll() -> None:
            while not stop.is_set():
                try:
                    s = read_metrics(port)
                except OSError:
                    s = None
                if s is not None:
                    for key, v in base.items():
                        s[key] -= v
                    s["t"] = time.monotonic()
                    samples.append(s)
                stop.wait(0.5)

        spy = None
        try:
            if warm_bodies:
                send_paced(port, warm_bodies, per_request / rate, args.threads)
                deadline = time.monotonic() + args.drain_timeout
                while time.monotonic() < deadline and read_metrics(port)["evaluated"] < n_warm:
                    time.sleep(0.2)
                base.update({k: read_metrics(port)[k] for k in base})
            watch = MemWatch(proc.pid).start()
            cpu = ThreadWatch(proc.pid).start()
            if args.profile:
                out = RESULTS / f"sustain-profile-{rate:.0f}.txt"
                RESULTS.mkdir(exist_ok=True)
                spy = start_pyspy(proc.pid, out, args.profile_rate)
            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            sent = send_paced(port, bodies, per_request / rate, args.threads)
            t_end = time.monotonic()
            deadline = t_end + args.drain_timeout
            while time.monotonic() < deadline and (not samples or samples[-1]["evaluated"] < n_traces):
                time.sleep(0.2)
            stop.set()
            poller.join()
            watch.stop()
            cpu.stop()
        finally:
            stop.set()
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                spy.wait(60)
            stop_process(proc)
        # the file after the server stopped (it checkpoints as it stops): what every trace stored
        # costs on disk, the registry's and the gold cases' bytes and a prefilled store's included
        store_bytes = db.stat().st_size if db.exists() else 0
        prefilled = stored_traces(db) - n_warm - n_traces if args.prefill_store else args.prefill
        spans = 4 * n_traces
        profile = stages(out, cpu, n_traces) if spy is not None else None
        window = max(sent.last_ack - sent.first, 1e-9)
        s0, s_mid, s_end = (
            at(samples, sent.first),
            at(samples, sent.first + window / 2),
            at(samples, sent.last_ack),
        )
        half = max(s_end["t"] - s_mid["t"], 1e-9)
        done = next((s for s in samples if s["evaluated"] >= n_traces), None)
        evaluated_half = (s_end["evaluated"] - s_mid["evaluated"]) / half
        sent_tps = n_traces / window
        row = {
            "rate": rate,
            "traces": n_traces,
            "prefilled_traces": prefilled,
            "warmup_traces": n_warm,
            "traces_per_request": per_request,
            "sent_tps": sent_tps,
            "held_back": sent.retries_503,
            "errors": sent.errors + sum(sent.other_status.values()),
            "max_late_s": sent.max_late_s,
            "stored_sps": (s_end["stored"] - s0["stored"]) / max(s_end["t"] - s0["t"], 1e-9),
            "stored_at_end": s_end["stored"],
            "spans": spans,
            "evaluated_tps_second_half": evaluated_half,
            "lag_at_end_s": s_end["lag"],
            "settle_lag_at_end_s": s_end["settle_lag"],
            "behind_at_end": n_traces - s_end["evaluated"],
            "drain_s": done["t"] - sent.last_ack if done is not None else None,
            "evaluated": samples[-1]["evaluated"] if samples else 0,
            "cpu_us_per_trace": watch.cpu_seconds / n_traces * 1e6,
            "cpu_main_us_per_trace": watch.cpu_main_seconds / n_traces * 1e6,
            "peak_rss_mb": watch.peak_mb,
            "server_peak_rss_mb": watch.server_peak_mb,
            "store_bytes": store_bytes,
            "store_bytes_per_trace": store_bytes / (prefilled + n_warm + n_traces),
            # the writer's checkpoints from the window's start to the last sample (the longest: the
            # server's whole run, the warm-up's included)
            "checkpoints": samples[-1]["checkpoints"] if samples else 0,
            "checkpoint_s": samples[-1]["checkpoint_s"] if samples else 0,
            "checkpoint_max_s": samples[-1]["checkpoint_max_s"] if samples else 0,
            "build_s": build_s,
            "profile_us_per_trace": profile,
            "samples": [
                {k: round(v - sent.first, 2) if k == "t" else v for k, v in x.items()} for x in samples
            ],
        }
        row["kept_up"] = bool(
            row["evaluated"] >= n_traces
            and evaluated_half >= 0.95 * sent_tps
            and max(s_end["lag"], s_end["settle_lag"]) <= args.settle_seconds + 5
            and row["behind_at_end"] <= sent_tps * (args.settle_seconds + 3)
        )
        logged = log.read_text(errors="replace")
        lines = logged.splitlines()
        # what the server logged (at ``--set log_level=info``) of its checkpoints, and of traces the
        # evaluation loop was not woken for (its idle poll found them)
        row["checkpoint_log"] = [ln for ln in lines if "checkpoint:" in ln]
        row["wake_log"] = [ln for ln in lines if "without a wake-up" in ln]
        if row["evaluated"] < n_traces:
            row["log_tail"] = logged[-2000:]
        return row


# --- the stages in one process -------------------------------------------------------------------


class StageClock:
    """CPU time (``time.process_time``: DuckDB's threads included) by stage, each stage's own time
    only (a stage inside another is taken out of it)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list[float]] = []  # per open stage: [start, time of the stages inside]

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            self._stack.append([time.process_time(), 0.0])
            try:
                return fn(*a, **k)
            finally:
                start, inner = self._stack.pop()
                spent = time.process_time() - start
                self.seconds[stage] = self.seconds.get(stage, 0.0) + spent - inner
                if self._stack:
                    self._stack[-1][1] += spent

        return timed


def run_stages(args: argparse.Namespace) -> dict[str, float]:
    """The server's path on one thread, request by request: decode and store the spans of a request
    (``--stage-batch`` traces), settle them, evaluate them in-process (the same functions a worker
    runs), log them, checkpoint when the WAL is as large as the server's writer waits for; CPU µs a
    trace by stage, the least of ``--repeat`` runs each. No HTTP, no thread or process hand-offs."""
    runs = [_stage_run(args) for _ in range(args.repeat)]
    best = {k: min(r.get(k, 0.0) for r in runs) for k in runs[0]}
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))


def _stage_run(args: argparse.Namespace) -> dict[str, float]:
    import collector.settling.settle as settle_mod
    import evaluators.service.store_runner as sr_mod
    from collector.ingest.span_rows import flatten
    from collector.normalize import DEFAULT_SOURCE_KEYS
    from collector.store import settling as settling_mod
    from collector.store import verdicts
    from collector.store.file.checkpoint import IDLE_CHECKPOINT_BYTES
    from evaluators.service.config import EvaluationSettings, evaluator_configs
    from evaluators.service.eval_log import LogBuffer, write_log
    from evaluators.service.loading import store_gold, store_kb
    from evaluators.service.references import References
    from evaluators.service.registry import discover
    from evaluators.service.running import Runner
    from ragfault.local import LocalStore
    from ragfault_core.gcpolicy import collect_rarely

    thresholds = gc.get_threshold()
    rng = random.Random(args.seed)
    kb = make_kb(rng, args.kb_docs)
    requests = list(export_requests(rng, kb, args.stages, args.stage_batch, time.time_ns()))
    clock = StageClock()
    patches = [
        (settle_mod, "load_trace_parts", "settle: fetch"),
        (settle_mod, "load_fills", "settle: fetch"),
        (settling_mod, "waiting_traces", "settle: find ready"),
        (settling_mod, "write_settled", "settle: write"),
        (sr_mod, "fetch_with_window", "evaluate: fetch"),
        (sr_mod, "views_from_tables", "evaluate: views and inputs"),
        (sr_mod, "make_inputs", "evaluate: views and inputs"),
        (sr_mod, "build_tables", "evaluate: evaluators and rows"),
        (References, "refresh", "evaluate: references"),
    ]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    orig_job = sr_mod.write_job

    def job(*a: Any) -> Any:
        return clock.wrap("evaluate: verdict write", orig_job(*a))

    with tempfile.TemporaryDirectory(prefix="ragfault-stages-") as tmp:
        db = Path(tmp) / "stages.duckdb"
        if args.prefill_store:
            shutil.copyfile(args.prefill_store, db)  # its registry stays; this run's is added
        local = LocalStore(str(db))
        try:
            public = [{k: v for k, v in d.items() if not k.startswith("_")} for d in kb]
            store_kb(local.write, "\n".join(json.dumps(d, ensure_ascii=False) for d in public))
            cases = [c for _, cs in requests for c in cs]
            store_gold(local.write, "\n".join(json.dumps(c, ensure_ascii=False) for c in cases), dataset="b")
            for obj, name, stage in patches:
                setattr(obj, name, clock.wrap(stage, getattr(obj, name)))
            sr_mod.write_job = job  # type: ignore[assignment]
            collect_rarely()  # as the server does once it has started
            specs = discover()
            runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs), tier="cheap")
            store_runner = sr_mod.StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)
            settler = settle_mod.Settler(
                local.store.cursor(), local.write, settle_seconds=1, max_wait_seconds=1, batch_limit=10**6
            )
            con = local.store.con
            decode = clock.wrap("ingest: decode (flatten)", flatten)
            insert = clock.wrap("ingest: span inserts", local.store.write_spans)
            settle = clock.wrap("settle: assemble and the rest", settler.run_once)
            evaluate = clock.wrap("evaluate: the rest", store_runner.evaluate)
            checkpoint = clock.wrap("checkpoints", local.store.checkpoint_if_idle)
            pending = clock.wrap("evaluate: queue and eval_log", verdicts.pending)
            log = clock.wrap("evaluate: queue and eval_log", local.write)
            for i, (req, _) in enumerate(requests):
                insert(con, decode(req, source_keys=DEFAULT_SOURCE_KEYS))
                settle(force=True)
                waiting = pending(con, 10**6)
                evaluate([t for t, _, _ in waiting], {t: at for t, _, at in waiting})
                done = {t: n for t, n, _ in waiting}
                log(lambda c, done=done: write_log(c, LogBuffer(), done))
                if i % 4 == 3:
                    checkpoint(con, IDLE_CHECKPOINT_BYTES)
            rows = con.execute("SELECT count(*) FROM evaluations").fetchall()[0][0]
        finally:
            gc.unfreeze()
            gc.set_threshold(*thresholds)
            sr_mod.write_job = orig_job
            for obj, name, fn in saved:
                setattr(obj, name, fn)
            local.close()
    n = args.stages
    return {k: v / n * 1e6 for k, v in clock.seconds.items()} | {"_rows": rows / n}


def table(rows: list[dict]) -> str:
    head = (
        "| offered traces/s | sent | stored spans/s | evaluated traces/s (2nd half) | lag at end (evaluation / settle) | behind at end "
        "| drain | CPU a trace | peak RSS of the tree (server process) | checkpoints (s, longest) | kept up |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        drain = (
            f"{r['drain_s']:.1f} s"
            if r["drain_s"] is not None
            else f"not within timeout ({r['evaluated']:.0f} done)"
        )
        lines.append(
            f"| {r['rate']:,.0f} | {r['sent_tps']:,.0f} | {r['stored_sps']:,.0f} | {r['evaluated_tps_second_half']:,.0f} "
            f"| {r['lag_at_end_s']:.1f} / {r['settle_lag_at_end_s']:.1f} s | {r['behind_at_end']:,.0f} | {drain} "
            f"| {r['cpu_us_per_trace']:,.0f} µs ({r['cpu_main_us_per_trace']:,.0f} server) "
            f"| {r['peak_rss_mb']:,.0f} MB ({r.get('server_peak_rss_mb', 0):,.0f} server) "
            f"| {r.get('checkpoints', 0):.0f} ({r.get('checkpoint_s', 0):.1f} s, {r.get('checkpoint_max_s', 0):.1f} s) "
            f"| {'yes' if r['kept_up'] else 'no'} |"
        )
    return head + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="400,800,1200", help="traces a second, comma-separated")
    ap.add_argument("--seconds", type=float, default=30.0, help="sending time per rate")
    ap.add_argument("--settle-seconds", type=float, default=1.0, help="[server] settle_seconds")
    ap.add_argument("--workers", type=int, default=2, help="[evaluation] workers")
    ap.add_argument(
        "--request-interval", type=float, default=0.1, help="seconds between requests (sets their size)"
    )
    ap.add_argument(
        "--per-request",
        type=int,
        default=0,
        help="traces a request, whatever the rate (128: the 512 spans of the OpenTelemetry SDK's "
        "BatchSpanProcessor, max_export_batch_size); 0: rate × --request-interval",
    )
    ap.add_argument("--threads", type=int, default=2, help="sender threads")
    ap.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        help="seconds of traffic at the rate, sent and evaluated before the measured window (0: none)",
    )
    ap.add_argument(
        "--server-python",
        help="the Python of another checkout's environment: its ragfault is measured (A B against this one)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a ragfault setting, [server] unless SECTION.KEY: --set checkpoint_wal_bytes=1073741824 (repeatable)",
    )
    ap.add_argument(
        "--prefill",
        type=int,
        default=0,
        help="start each rate on a store that already holds this many traces of the same shape, stored "
        "and evaluated (built once by the measured server, kept in --prefill-dir)",
    )
    ap.add_argument("--prefill-dir", default=str(RESULTS), help="where prefilled stores are kept")
    ap.add_argument(
        "--prefill-store",
        help="start each rate on a copy of this store (bench/scale.py --keep), this run's registry and gold "
        "cases loaded into it",
    )
    ap.add_argument("--kb-docs", type=int, default=400)
    ap.add_argument(
        "--drain-timeout", type=float, default=300.0, help="seconds to wait for the backlog after sending"
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--profile",
        action="store_true",
        help="record the server and its workers with py-spy while sending and draining "
        "(bench/results/sustain-profile-RATE.txt; summarize with bench/profile_summary.py)",
    )
    ap.add_argument("--profile-rate", type=int, default=100, help="py-spy samples a second")
    ap.add_argument("--out", default=str(RESULTS / "sustain.json"))
    ap.add_argument(
        "--stages",
        type=int,
        default=0,
        help="instead of a server: this many traces through the server's path on one thread, "
        "CPU µs a trace by stage (no HTTP, no hand-offs)",
    )
    ap.add_argument("--stage-batch", type=int, default=200, help="traces a request with --stages")
    ap.add_argument("--repeat", type=int, default=3, help="runs with --stages (the least is printed)")
    args = ap.parse_args(argv)
    if args.stages:
        prof = run_stages(args)
        rows_a_trace = prof.pop("_rows")
        print(f"CPU µs a trace by stage, {args.stages:,} traces in requests of {args.stage_batch}, "
              f"least of {args.repeat} runs ({rows_a_trace:.1f} verdict rows a trace):")  # fmt: skip
        for stage, us in prof.items():
            print(f"  {us:8,.0f}  {stage}")
        print(f"  {sum(prof.values()):8,.0f}  total")
        return 0
    rows = []
    for rate in (float(x) for x in args.rates.split(",") if x.strip()):
        row = run_rate(args, rate)
        rows.append(row)
        print(table([row]).splitlines()[-1], flush=True)
        print(
            f"  the store after the server stopped: {row['store_bytes'] / 2**20:,.1f} MiB, "
            f"{row['store_bytes_per_trace']:,.0f} B a trace stored"
        )
        if row.get("profile_us_per_trace"):
            prof = row["profile_us_per_trace"]
            print(f"  CPU µs a trace by stage (total {sum(prof.values()):,.0f}):")
            for stage, us in prof.items():
                print(f"    {us:8,.0f}  {stage}")
        if "log_tail" in row:
            print(row["log_tail"], file=sys.stderr)
        if row["drain_s"] is not None and row["drain_s"] > args.settle_seconds + 5:
            # a backlog that took this long once sending ended waited for something: say what the
            # server logged of traces its evaluation loop was not woken for
            print(f"  the drain took {row['drain_s']:.1f} s; missed wake-ups logged:", file=sys.stderr)
            for ln in row["wake_log"] or ["(none; they are logged at --set log_level=info)"]:
                print(f"    {ln}", file=sys.stderr)
    print()
    print(table(rows))
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "settings": {k: v for k, v in vars(args).items() if k != "out"},
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "rows": rows,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
