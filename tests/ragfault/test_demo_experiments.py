"""``ragfault demo --experiments`` as a user runs it: after the demo, a second run compared with the
first, its closed-book twin with each of the four outcomes, a conflict-sample run with its
follows-stale rate, and a changed document with the cases to re-run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragfault.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=240)  # fmt: skip


def _row(section: str, first: str) -> list[str]:
    line = next(x for x in section.splitlines() if x.startswith(first + " "))
    return re.split(r"\s{2,}", line.strip())


def test_demo_experiments(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    p = cli("demo", "--experiments", "--db", str(db), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "17 of 17 cases attributed to the planted root cause" in out  # demo-v1 is the demo as before
    exp = out.split("######## Experiments ########", 1)[1]

    # the comparison: four fixes, one regression
    assert "17 cases in both runs: 1 regressed, 4 improved" in exp and "McNemar exact p = 0.375" in exp
    ok = _row(exp, "ok_rate")
    assert ok[2:6] == ["0.294 (5/17)", "0.471 (8/17)", "17", "+0.176"]
    cases = exp.split("== Cases ==", 1)[1].split("== Closed-book baseline ==", 1)[0]
    assert _row(cases, "sso-protocols")[1:] == ["ok", "incomplete_answer"]

    # the closed-book twin: every outcome, and the strong-reliance parametric answer flagged
    closed = exp.split("== Closed-book baseline ==", 1)[1]
    assert _row(closed, "demo-v2")[:8] == ["demo-v2", "demo-v2-closed", "6", "3", "3", "5", "0", "0.1765"]
    lines = closed.split("closed-book outcome per case:", 1)[1].split("==", 1)[0].strip().splitlines()[2:]
    outcomes = {r[0]: (r[1], r[3]) for r in (re.split(r"\s+", x.strip()) for x in lines) if r[0]}
    assert outcomes["member-transfer"] == ("parametric", "True")
    assert outcomes["sso-protocols"][0] == "hurt" and outcomes["refund-day-20"][0] == "helped"
    assert outcomes["status-page"][0] == "neither"
    assert {o for o, _ in outcomes.values()} == {"helped", "hurt", "parametric", "neither"}

    # conflict samples: one answer follows the stale copy, one does not, one copy kept out
    conflicts = exp.split("== Conflict samples ==", 1)[1]
    assert _row(conflicts, "demo-conflicts")[1:8] == ["3", "3", "1", "2", "1", "0.5", "refund-day-20"]

    # the changed refund policy: the cases to re-run
    changed = exp.split("== A document changed: refund-policy-2026 ==", 1)[1]
    assert "2 cases to re-run: refund-7-day-claim, refund-day-20" in changed, changed

    # the database answers the same through the CLI
    q = cli("compare", "--db", str(db), "--run", "demo-v2", "--baseline", "demo-v1", "--format", "json",
            "--resamples", "1000", cwd=tmp_path)  # fmt: skip
    assert q.returncode == 0, q.stderr
    body = json.loads(q.stdout)
    assert body["cases"]["regressed"] == ["sso-protocols"] and len(body["cases"]["improved"]) == 4
    a = cli("affected", "--db", str(db), "--format", "json", cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["affected_not_rerun"] == ["refund-7-day-claim", "refund-day-20"]
