"""The triage query's triggers: a trace is queued for a trigger only when its tier's latest scheduling
decision names one (``eval_status``'s rule), whatever the earlier decisions of that tier said."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from collector.store import Store
from collector.store.reader import run_select
from queries import load_query
from tests.demo_db import demo_db  # noqa: F401 (fixture)

LOG = "INSERT INTO eval_log (trace_id, tier, evaluator, decision, reason, generation, logged_at) VALUES (?, ?, ?, ?, ?, ?, ?)"


def _queue(cur: Any) -> dict[str, dict[str, Any]]:
    q = load_query("triage")
    res = run_select(cur, q.sql, q.bind({"limit": 100_000}), row_cap=100_000)
    return {row[0]: dict(zip(res.columns, row, strict=True)) for row in res.rows}


def test_only_a_tiers_latest_decision_queues_a_trace_for_its_trigger(
    demo_db: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "triggers.duckdb"
    shutil.copyfile(demo_db, db)
    store = Store(db)
    try:
        cur = store.cursor()
        before = _queue(cur)
        # live traces (no gold case, not promoted) whose latest decisions name no trigger
        live = [
            r[0]
            for r in cur.execute(
                "SELECT trace_id FROM live_attribution WHERE trace_id NOT IN (SELECT trace_id FROM attribution) "
                "AND trace_id NOT IN (SELECT trace_id FROM gold_promotions) ORDER BY trace_id"
            ).fetchall()
            if r[0] not in before or before[r[0]]["triggers"] is None
        ]
        assert len(live) >= 2, "the demo needs live traces without a trigger"
        superseded, latest = live[:2]
        later = datetime.now() + timedelta(days=1)
        rows = [
            # a trigger the tier's next decision superseded: not a reason to look
            (
                superseded,
                "judge",
                None,
                "filtered",
                "no judge configured (trigger:negative_feedback)",
                90,
                later,
            ),
            (superseded, "judge", None, "evaluated", "sampled", 91, later + timedelta(seconds=1)),
            # an older decision without one, then the latest naming a trigger: queued, with it
            (latest, "judge", None, "sampled_out", "rate 0.0", 92, later),
            (
                latest,
                "judge",
                None,
                "filtered",
                "no judge configured (trigger:low_score)",
                93,
                later + timedelta(seconds=1),
            ),
            # an evaluator's own row, the latest of all, is no tier's decision
            (
                superseded,
                "judge",
                "answer_support",
                "filtered",
                "x (trigger:negative_feedback)",
                94,
                later + timedelta(seconds=2),
            ),
        ]
        for row in rows:
            cur.execute(LOG, row)
        after = _queue(cur)
    finally:
        store.con.close()

    def untriggered(trace_id: str) -> bool:
        row = after.get(trace_id)
        return row is None or ("trigger" not in row["reasons"] and row["triggers"] is None)

    assert untriggered(superseded)
    assert "trigger" in after[latest]["reasons"]
    assert after[latest]["triggers"] == "low_score"
    # nothing else moved in or out of the queue
    assert set(after) - {latest} == set(before) - {latest}
