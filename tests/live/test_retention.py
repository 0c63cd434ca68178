"""Retention deletes whole traces from every table in one go; export writes readable Parquet by day."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pyarrow.dataset as ds

from collector.maintenance.retention import RetentionService, utcnow
from tests.live.conftest import DOCS, GOLD
from tests.tracegen import rag_trace

TABLES = (
    "spans",
    "steps",
    "step_documents",
    "evaluations",
    "evaluation_history",
    "eval_log",
    "feedback",
    "traces",
)
ROOT = Path(__file__).parents[2]


def counts(srv, ids: list[str]) -> dict[str, int]:
    return {
        t: srv.scalar(f"SELECT count(*) FROM {t} WHERE trace_id IN (SELECT unnest($ids))", ids=ids)
        for t in TABLES
    }


def populate(srv, service: str, n: int) -> list[str]:
    tr = srv.tracer(service)
    ids = [
        rag_trace(tr, query=GOLD["query"], answer="30 days", candidates=DOCS, case_id="c1") for _ in range(n)
    ]
    srv.drain()
    for t in ids:  # feedback, and a second evaluation so evaluation_history has rows
        srv.http.post("/api/v1/feedback", json={"trace_id": t, "kind": "thumbs", "value": "down"})
    srv.drain()
    return ids


def test_retention_by_size_and_age_deletes_consistently(live) -> None:
    srv = live(
        "[sampling]\nproduction_rate = 0.0\n"
        "[retention]\nmax_age_days = 30\n[retention.services.small]\nmax_traces = 2\n"
    )
    small = populate(srv, "small", 5)
    big = populate(srv, "big", 3)
    before = counts(srv, small + big)
    assert all(before[t] > 0 for t in TABLES), before
    before_big = counts(srv, big)
    keep_small = [
        r[0]
        for r in srv.sql(
            "SELECT trace_id FROM traces WHERE service_name = 'small' ORDER BY start_time DESC, trace_id LIMIT 2"
        )
    ]

    deleted = srv.runtime.find(RetentionService).run_once()
    gone = [t for t in small if t not in keep_small]
    assert deleted["traces"] == 3
    assert counts(srv, gone) == {t: 0 for t in TABLES}
    assert counts(srv, big) == before_big  # the other service's traces are untouched
    assert all(v > 0 for v in counts(srv, keep_small).values())
    assert sum(deleted[t] for t in TABLES) == sum(before.values()) - sum(
        counts(srv, big + keep_small).values()
    )
    # a file store's facts go with their traces (a gold case's trace: its attribution and health rows,
    # kept or named in facts_changed until a flush computes them)
    for facts in ("attribution_facts", "trace_health_facts"):
        assert deleted.get(facts, 0) + deleted.get("facts_changed", 0) >= len(gone)
    for facts in ("attribution_facts", "trace_health_facts", "facts_changed"):
        assert (
            srv.scalar(f"SELECT count(*) FROM {facts} WHERE trace_id IN (SELECT unnest($ids))", ids=gone) == 0
        )

    # age: 40 days on, everything is past max_age_days
    later = srv.runtime.find(RetentionService).run_once(now=utcnow() + timedelta(days=40))
    assert later["traces"] == 5
    assert counts(srv, small + big) == {t: 0 for t in TABLES}


def test_export_writes_day_partitions_and_can_delete_after(live, tmp_path) -> None:
    srv = live(f"[sampling]\nproduction_rate = 0.0\n[retention]\nexport_dir = '{tmp_path}'\n")
    ids = populate(srv, "svc", 3)
    before = counts(srv, ids)
    days = {
        r[0]
        for r in srv.sql("SELECT strftime(start_time, '%Y-%m-%d') FROM traces WHERE service_name = 'svc'")
    }
    out = tmp_path / "archive"
    env = dict(os.environ, RAGFAULT_SERVER=srv.url, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "export", str(out), "--service", "svc", "--delete-after"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    for table in TABLES:
        data = ds.dataset(out / table, format="parquet", partitioning="hive").to_table()
        assert data.num_rows == before[table], table
        assert set(data.column("trace_id").to_pylist()) <= set(ids)
        assert {str(d) for d in data.column("day").to_pylist()} == days
    assert [p.name for p in (out / "spans").iterdir()][0].startswith("day=")
    assert counts(srv, ids) == {t: 0 for t in TABLES}


def test_api_export_is_confined_to_the_export_directory(live, tmp_path) -> None:
    srv = live("[sampling]\nproduction_rate = 0.0\n")
    populate(srv, "svc", 1)
    r = srv.http.post("/api/v1/export", json={"out_dir": str(tmp_path / "x")})
    assert r.status_code == 400 and "export_dir" in r.text  # no export directory configured
    root = tmp_path / "root"
    srv2 = live(
        f"[sampling]\nproduction_rate = 0.0\n[retention]\nexport_dir = '{root}'\n",
        db=str(tmp_path / "second.duckdb"),
    )
    populate(srv2, "svc", 1)
    r = srv2.http.post("/api/v1/export", json={"out_dir": "../../etc"})
    assert r.status_code == 400 and "inside" in r.text
    r = srv2.http.post("/api/v1/export", json={"out_dir": "archive"})
    assert r.status_code == 200, r.text
    assert (tmp_path / "root" / "archive" / "spans").is_dir()
