"""Migration 029 (a run's marks kept as ``steps.run_group`` and ``steps.baseline_of``): a file stored
before it reads the marks its spans carry after migrating, from every carrier the normalizer reads
(a plain attribute, a baggage prefix, OpenInference ``metadata``), and the ``run_marks`` view reads
only those columns."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from collector.store import Store
from tests.demo_db import demo_db  # noqa: F401 (fixture)
from tests.store.test_layout_before_after import copy_demo_before

BEFORE = 29


def _mark(con: duckdb.DuckDBPyConnection, where: str, attrs: dict[str, str]) -> int:
    """Merge ``attrs`` into the attributes of the spans ``where`` selects; how many."""
    rows = con.execute(f"SELECT count(*) FROM spans WHERE {where}").fetchall()[0][0]
    con.execute(
        f"UPDATE spans SET attributes = json_merge_patch(attributes, ?) WHERE {where}", [json.dumps(attrs)]
    )
    return int(rows)


def test_steps_stored_before_029_take_their_runs_marks_from_their_spans(
    demo_db: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "before-029.duckdb"
    con = duckdb.connect(str(db))
    try:
        copy_demo_before(demo_db, con, BEFORE)
        assert "run_group" not in {r[0] for r in con.execute("DESCRIBE steps").fetchall()}
        # two runs: the demo's, and a copy of some of its spans under another run id
        runs = [
            r[0] for r in con.execute("SELECT DISTINCT run_id FROM spans WHERE run_id IS NOT NULL").fetchall()
        ]
        assert runs, "the demo needs a run"
        run = runs[0]
        con.execute("UPDATE spans SET run_id = 'closed' WHERE run_id = ? AND parent_span_id IS NULL "
                    "AND trace_id IN (SELECT trace_id FROM spans WHERE run_id = ? ORDER BY trace_id LIMIT 2)", [run, run])  # fmt: skip
        con.execute("UPDATE steps SET run_id = s.run_id FROM spans s WHERE steps.trace_id = s.trace_id "
                    "AND steps.span_id = s.span_id")  # fmt: skip
        assert _mark(con, f"run_id = '{run}' AND parent_span_id IS NULL", {"traceloop.association.properties.ragfault.run_group": "cfg"}) > 0  # fmt: skip
        metadata = json.dumps({"ragfault": {"baseline_of": run}})
        assert _mark(con, "run_id = 'closed'", {"metadata": metadata, "baggage.ragfault.run_group": ""}) > 0
        con.execute("CHECKPOINT")
    finally:
        con.close()
    store = Store(db)  # applies 029, makes the views
    try:
        cur = store.cursor()
        marks = cur.execute(
            "SELECT run_id, run_group, baseline_of, source FROM run_marks ORDER BY run_id"
        ).fetchall()
        marked_steps = cur.execute(
            "SELECT count(*) FROM steps WHERE run_group IS NOT NULL OR baseline_of IS NOT NULL"
        ).fetchall()[0][0]
        sent = cur.execute(
            "SELECT count(*) FROM spans WHERE CAST(attributes AS VARCHAR) LIKE '%run\\_group%' ESCAPE '\\' "
            "OR CAST(attributes AS VARCHAR) LIKE '%baseline\\_of%' ESCAPE '\\'"
        ).fetchall()[0][0]
    finally:
        store.close()
    # an empty value is no mark: the closed-book run has its twin, not a group
    assert marks == sorted([(run, "cfg", None, "traces"), ("closed", None, run, "traces")])
    assert marked_steps == sent
