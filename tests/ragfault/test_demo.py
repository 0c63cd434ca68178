"""``ragfault demo`` as a user runs it: a subprocess that starts a collector, runs the sample app,
prints the report and "17 of 17", and leaves a database the printed ``ragfault query`` commands read."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_demo_end_to_end(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    p = cli("demo", "--db", str(db), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "17 of 17 cases attributed to the planted root cause" in out
    for heading in ("== Root causes ==", "== Cases ==", "== Layered metrics =="):
        assert heading in out
    causes = ("permission_violation", "no_retrieval", "stale_context", "dropped_before_context",
              "answered_unanswerable", "over_refusal", "unsupported_claims", "invalid_citation")  # fmt: skip
    for cause in causes:
        assert cause in out
    assert db.exists()
    assert f"ragfault serve --db {db}" in out  # the command that opens the results in the web UI

    # the commands the demo prints work as written
    printed = [line.strip() for line in out.splitlines() if line.strip().startswith("ragfault query --db")]
    assert len(printed) >= 2
    for line in printed:
        args = shlex.split(line)[1:]
        q = cli(*args, cwd=tmp_path)
        assert q.returncode == 0, line + "\n" + q.stdout + q.stderr

    sql = "SELECT root_cause, count(*) AS n FROM attribution GROUP BY ALL ORDER BY root_cause"
    q = cli("query", "--db", str(db), "--format", "json", sql, cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    text = q.stdout.strip()
    body = json.loads(text)
    rows = body["rows"] if isinstance(body, dict) else body
    counts = (
        {r[0]: r[1] for r in rows}
        if rows and isinstance(rows[0], list)
        else {r["root_cause"]: r["n"] for r in rows}
    )
    assert sum(counts.values()) == 17
    assert set(causes) <= set(counts)  # each planted cause is some case's root cause, not just printed
    assert counts["stale_context"] == 2 and counts["ok"] == 5
