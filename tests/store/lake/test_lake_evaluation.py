"""Two ``ragfault serve --store ducklake`` processes settle and evaluate one lake: the RAG traces of
every root cause (``tests/attribution/data.py``), made by the real SDK, sent over OTLP/HTTP to both
collectors (whole, split between them, re-sent to the other), one collector killed with SIGKILL
while it holds claims of traces it has not settled (triggers in the catalog make sure it does) and
started again, its claims taken over once they expire. Once both are quiet: every acknowledged span
is in ``spans`` exactly once, every trace was evaluated once per generation and has one current set
of verdicts, and the verdicts and ``attribution`` rows equal those of the single-file store that
received the same traces."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from collector.api.export import read_export
from collector.store.lake import claims as lake_claims
from tests.attribution.conftest import wait_evaluated
from tests.attribution.data import GOLD, KB, PLANTS, QUERY, docs, jsonl
from tests.conftest import Server, make_settings
from tests.pg import Postgres
from tests.store.conftest import Lake
from tests.store.lake.test_two_collectors import Collector, key
from tests.tracegen import rag_trace
from tests.waiting import wait_equal, wait_until

RUNS = ("r1", "r2")
CONFIG = "[evaluation]\nworkers = 0\n"  # in-process evaluation: no worker pools on a shared machine
LAKE_ENV = {"RAGFAULT_SETTLE_SECONDS": "1", "RAGFAULT_LAKE_CLAIM_SECONDS": "5"}
# what the two stores must agree on: the current verdicts (no times, no generation numbers: a trace
# split between collectors may be settled and evaluated before its last spans came, then again)
VERDICTS = (
    "SELECT trace_id, coalesce(span_id, ''), evaluator, metric, status, value, passed, label "
    "FROM evaluations ORDER BY ALL"
)
ATTRIBUTION = "SELECT * FROM attribution ORDER BY trace_id"
QUIET = (
    "SELECT count(*) FROM traces WHERE settled_at IS NOT NULL AND assembled_spans = span_count "
    "AND eval_generation > 0 AND evaluated_spans = assembled_spans"
)


def make_traces() -> tuple[list[list[ReadableSpan]], list[str]]:
    """One trace per root cause and run, made by the real SDK and kept in memory; and their ids."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "lake-eval"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("lake-eval")
    ids = []
    for run in RUNS:
        for case_id, cands, reranked, answer, citations, retrieve in PLANTS["en"].values():
            ids.append(
                rag_trace(
                    tracer,
                    query=QUERY[case_id],
                    answer=answer,
                    candidates=docs(cands),
                    reranked=docs(reranked) if reranked is not None else None,
                    retrieve=retrieve,
                    case_id=case_id,
                    run_id=run,
                    citations=list(citations) if citations else None,
                )  # fmt: skip
            )
    by_trace: dict[int, list[ReadableSpan]] = {}
    for s in memory.get_finished_spans():
        assert s.context is not None
        by_trace.setdefault(s.context.trace_id, []).append(s)
    provider.shutdown()
    return list(by_trace.values()), ids


@pytest.fixture
def file_store(tmp_path: Path) -> Iterator[Server]:
    config = tmp_path / "file.toml"
    config.write_text(CONFIG, encoding="utf-8")
    srv = Server(make_settings(tmp_path / "file", config_file=str(config), settle_seconds=1))
    try:
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        yield srv
    finally:
        srv.stop()


def _cli(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _ids_out(text: str) -> str:
    return re.sub(r"\b[0-9a-f]{32}\b", "<trace>", text)


def _wait_quiet(c: Collector, traces: int, timeout: float = 300) -> None:
    what = "the traces settled and evaluated with all their spans"
    wait_equal(lambda: c.sql(QUIET)[0][0], traces, what=what, timeout=timeout, every=0.5)


# In the catalog database, while ``claim_gate`` names a victim (``:PID:`` of its holder): only the
# victim's claims are taken (the others' are skipped, so their rounds find nothing to work on) and
# its releases are skipped, so whatever it claims it still holds when it is killed. Always: a claim
# another holder takes over (its holder changes) is recorded in ``claim_takeovers``.
GATE = f"""
CREATE TABLE claim_gate (victim text NOT NULL);
CREATE TABLE claim_takeovers (kind text, trace_id text, dead text, taker text);
CREATE FUNCTION claim_gate() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE v text := (SELECT victim FROM claim_gate LIMIT 1);
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF v IS NOT NULL AND strpos(OLD.holder, v) > 0 THEN RETURN NULL; END IF;
    RETURN OLD;
  END IF;
  IF v IS NOT NULL AND strpos(NEW.holder, v) = 0 THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' AND OLD.holder <> NEW.holder THEN
    INSERT INTO claim_takeovers VALUES (NEW.kind, NEW.trace_id, OLD.holder, NEW.holder);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER claim_gate BEFORE INSERT OR UPDATE OR DELETE ON {lake_claims.TABLE}
  FOR EACH ROW EXECUTE FUNCTION claim_gate();
"""


def _catalog(postgres: Postgres, lake: Lake, sql: str) -> str:
    return postgres.query(lake.catalog.rsplit("/", 1)[1], sql)


# No lake commit (a new DuckLake snapshot) is taken while `hold_commits` says so. Releasing the hold
# updates that row: dropping the trigger would need an exclusive lock on `ducklake_snapshot`, which
# waits for every catalog transaction a collector has open (and holds up the ones that follow).
HOLD = """
CREATE TABLE hold_commits (held boolean NOT NULL);
INSERT INTO hold_commits VALUES (true);
CREATE FUNCTION hold_commits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT held FROM hold_commits) THEN RAISE EXCEPTION 'lake commits held by the test'; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER hold_commits BEFORE INSERT ON ducklake_snapshot FOR EACH ROW EXECUTE FUNCTION hold_commits();
"""


def _kill_holding(
    c: Collector, other: Collector, postgres: Postgres, lake: Lake, timeout: float = 120
) -> set[str]:
    """SIGKILL ``c`` once the catalog shows it holding the claim of a trace not settled yet, then
    let commits and the other collectors' claims go on. Meanwhile the claim gate names ``c`` the
    victim (the other collectors claim nothing, its claims are never released), and no lake commit
    is taken, so what it claims stays to be done. Returns the traces it held unsettled."""
    mark = f":{c.proc.pid}:"
    held = f"SELECT DISTINCT trace_id FROM {lake_claims.TABLE} WHERE kind = 'settle' AND strpos(holder, '{mark}') > 0"
    _catalog(postgres, lake, HOLD)

    def held_unsettled() -> set[str]:
        claimed = set(_catalog(postgres, lake, held).split())
        settled = {r[0] for r in other.sql("SELECT trace_id FROM traces WHERE settled_at IS NOT NULL")}
        return claimed - settled

    what = f"{c.proc.pid} to claim a trace to settle"
    waiting = wait_until(held_unsettled, what=what, timeout=timeout, every=0.2)
    c.proc.kill()
    c.proc.wait(30)
    _catalog(postgres, lake, "UPDATE hold_commits SET held = false; DELETE FROM claim_gate")
    return waiting


def test_two_collectors_settle_and_evaluate_like_one_file(
    lake: Lake, tmp_path: Path, file_store: Server, postgres: Postgres
) -> None:
    traces, ids = make_traces()
    spans = [s for t in traces for s in t]
    assert OTLPSpanExporter(endpoint=f"{file_store.url}/v1/traces", timeout=60).export(spans) is (
        SpanExportResult.SUCCESS
    )

    config = tmp_path / "lake.toml"
    exports = tmp_path / "exports"
    config.write_text(CONFIG + f'[retention]\nexport_dir = "{exports}"\n', encoding="utf-8")
    args = ("--config", str(config))
    collectors = [Collector(lake, tmp_path / f"collector{i}.log", LAKE_ENV, args) for i in range(2)]
    try:
        for c in collectors:
            c.wait_ready()
        a, b = collectors
        _catalog(postgres, lake, GATE + f"INSERT INTO claim_gate VALUES (':{b.proc.pid}:');")
        # the references through one collector's API; the other reads them from the lake
        for path, rows in (("/api/v1/kb", KB), ("/api/v1/gold", GOLD)):
            r = httpx.post(collectors[0].url + path, content=jsonl(rows), timeout=60)
            assert r.status_code == 200 and r.json()["loaded"] == len(rows), r.text
        acked: set[tuple[str, str]] = set()

        def send(c: Collector, batch: list[ReadableSpan]) -> None:
            if batch:
                assert OTLPSpanExporter(endpoint=f"{c.url}/v1/traces", timeout=60).export(batch) is (
                    SpanExportResult.SUCCESS
                )
                acked.update(key(s) for s in batch)

        first: list[list[ReadableSpan]] = [[], []]
        retry: list[list[ReadableSpan]] = [[], []]
        for n, trace in enumerate(traces):
            if n % 3 == 0:  # the whole trace to one collector
                first[n % 2] += trace
            elif n % 3 == 1:  # its spans split between the two (the root, finished last, in the second)
                first[0] += trace[: len(trace) // 2]
                retry[1] += trace[len(trace) // 2 :]
            else:  # sent to one, then re-sent to the other
                first[n % 2] += trace
                retry[1 - n % 2] += trace
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(send, (a, b), first))
        # b is killed mid-run while it holds claims of traces it has not settled: once they expire,
        # a collector takes them over and settles those traces
        victim = f":{b.proc.pid}:"
        held = _kill_holding(b, a, postgres, lake)
        b = Collector(lake, b.log.with_name("collector1-restarted.log"), LAKE_ENV, args)
        collectors.append(b)
        b.wait_ready()
        again = [s for t in random.Random(18).sample(traces, 6) for s in t]
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(send, (a, b), (retry[0] + again, retry[1] + again[: len(again) // 2])))
        assert len(acked) == len(spans)

        _wait_quiet(a, len(traces))
        wait_evaluated(file_store, ids)
        taken = _catalog(
            postgres,
            lake,
            f"SELECT DISTINCT trace_id FROM claim_takeovers WHERE strpos(dead, '{victim}') > 0",
        )
        assert held <= set(taken.split())  # the take-over path ran for each
        for c in (a, b):
            assert {tuple(r) for r in c.sql("SELECT trace_id, span_id FROM spans")} == acked
            assert c.sql("SELECT count(*) FROM spans")[0][0] == len(spans)
        # each generation of a trace evaluated once, and one current set of verdicts a trace
        assert (
            a.sql(
                "SELECT trace_id, generation FROM trace_evals WHERE event = 'evaluated' GROUP BY ALL HAVING count(*) > 1"
            )
            == []
        )
        assert (
            a.sql(
                "SELECT trace_id, evaluator FROM evaluations GROUP BY ALL HAVING count(DISTINCT generation) > 1"
            )
            == []
        )
        assert a.sql("SELECT count(DISTINCT trace_id) FROM evaluations")[0][0] == len(traces)
        lake_verdicts: list[Any] = a.sql(VERDICTS)
        assert lake_verdicts == file_store.sql(VERDICTS)
        lake_attribution = a.sql(ATTRIBUTION)
        assert len(lake_attribution) == len(traces)
        assert lake_attribution == file_store.sql(ATTRIBUTION)
        assert {r[3] for r in lake_attribution} >= {"ok", "stale_context", "candidate_miss"}
        # what users run: the report is the file's (but for which trace it shows as an example of a
        # cause: any of them), and a re-evaluation makes a second generation
        lake_report = _cli("report", "--server", a.url)
        assert "permission_violation" in lake_report
        assert _ids_out(lake_report) == _ids_out(_cli("report", "--server", file_store.url))
        assert _cli("evaluate", "--server", b.url, "--run", "r1").startswith(f"evaluated {len(traces) // 2} ")
        assert a.sql("SELECT DISTINCT run_id, eval_generation FROM traces ORDER BY ALL") == [
            ["r1", 2],
            ["r2", 1],
        ]
        assert (
            a.sql(
                "SELECT trace_id, evaluator FROM evaluations GROUP BY ALL HAVING count(DISTINCT generation) > 1"
            )
            == []
        )
        assert a.sql(VERDICTS) == lake_verdicts
        assert a.sql("SELECT count(*) FROM evaluation_history")[0][0] == len(lake_verdicts) // 2
        # exported through a collector's API and deleted after: every span once, then nothing left
        out = json.loads(
            _cli(
                "export", str(exports / "all"), "--server", b.url, "--service", "lake-eval", "--delete-after"
            )
        )
        assert out["traces"] == len(traces), out
        exported = read_export(exports / "all", "spans")
        assert exported.num_rows == len(spans)
        keys = zip(
            exported.column("trace_id").to_pylist(), exported.column("span_id").to_pylist(), strict=True
        )
        assert set(keys) == acked
        assert read_export(exports / "all", "evaluations").num_rows == len(lake_verdicts)
        for c in (a, b):
            assert c.sql("SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM traces), "
                         "(SELECT count(*) FROM evaluations)") == [[0, 0, 0]]  # fmt: skip
    finally:
        for c in collectors:
            c.stop()
