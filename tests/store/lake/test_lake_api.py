"""The judge and experiments APIs on a lake collector (a server in this process, ``--store
ducklake``): human labels stored and read back by the calibration report, a judge version trusted,
runs marked and marked again, a comparison asked for. (The judge's own runs write through
``collector.store.judging``, which the store contract runs on both backends.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server, make_settings
from tests.store.conftest import Lake


@pytest.fixture
def srv(lake: Lake, tmp_path: Path) -> Iterator[Server]:
    s = Server(
        make_settings(
            tmp_path,
            store="ducklake",
            catalog=lake.catalog,
            data_path=str(lake.data_path),
            extension_repository=False,
        )
    )
    try:
        yield s
    finally:
        s.stop()


def test_labels_calibration_trust_and_run_marks_on_a_lake(srv: Server) -> None:
    labels = [
        {"trace_id": "ab" * 16, "metric": "judge_refusal", "label": "refused", "annotator": "ana"},
        {
            "trace_id": "cd" * 16,
            "metric": "judge_refusal",
            "label": "answered",
            "annotator": "ana",
            "anchor": True,
        },
    ]
    r = srv.http.post("/api/v1/labels", json=labels)
    assert r.status_code == 200 and r.json() == {"loaded": 2}
    assert srv.sql("SELECT trace_id, anchor FROM human_labels ORDER BY trace_id") == [
        ["ab" * 16, False],
        ["cd" * 16, True],
    ]
    # a judge version's verdicts as the judge tier records them (agreeing on one label of two)
    seen = datetime(2026, 3, 2, 12, 0, 0)

    def judged(con: Any) -> None:
        con.execute(
            "INSERT INTO judge_versions (model, prompt_version, first_seen) VALUES ('judge-a', 'v1', $at)",
            {"at": seen},
        )
        for trace_id, source in (("ab" * 16, "online"), ("cd" * 16, "anchor")):
            con.execute(
                "INSERT INTO judge_verdicts (trace_id, metric, label, model, prompt_version, source, scored_at) "
                "VALUES ($t, 'judge_refusal', 'refused', 'judge-a', 'v1', $s, $at)",
                {"t": trace_id, "s": source, "at": seen},
            )

    srv.runtime.writer.call(judged)
    (version,) = srv.http.get("/api/v1/judge/calibration").json()["versions"]
    assert (version["model"], version["prompt_version"]) == ("judge-a", "v1")
    assert version["overall"]["n"] == 2 and version["overall"]["accuracy"] == 0.5
    r = srv.http.post("/api/v1/judge/accept", json={"model": "judge-a", "prompt_version": "v1"})
    assert r.status_code == 200, r.text
    assert srv.sql("SELECT trusted FROM judge_versions") == [[True]]
    # experiments: a run marked, then marked again (the mark is replaced), and read back
    assert srv.http.put("/api/v1/runs/B", json={"run_group": "cfg-b"}).status_code == 200
    assert srv.http.put("/api/v1/runs/B", json={"run_group": "cfg-c"}).status_code == 200
    assert srv.sql("SELECT run_id, run_group FROM marked_runs") == [["B", "cfg-c"]]
    marks = {m["run_id"]: m for m in srv.http.get("/api/v1/runs").json()["runs"]}
    assert marks["B"]["run_group"] == "cfg-c" and marks["B"]["source"] == "api"
    # a comparison runs its queries over the lake's views (no run has evaluated traces with cases yet)
    r = srv.http.get("/api/v1/compare", params={"run": "nope", "baseline": "B"})
    assert r.status_code == 400 and "run 'B' has no evaluated trace" in r.json()["detail"]
