"""``ragfault gate`` on a seeded regression: a baseline run, and a candidate run in which a case that
was ok now fails and a forbidden document reaches the candidates. The gate runs as a subprocess on
the database file after the server stopped (and once through the running server)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.attribution.conftest import start_server, wait_evaluated
from tests.attribution.data import EN_OK, GOLD, KB, QUERY, ZH_FULL, ZH_OK, docs, jsonl
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

ROOT = Path(__file__).resolve().parents[2]
REFUSE = "资料里没有家庭套餐价格的信息，建议咨询人工客服。"
# case -> (candidates, answer) per run
BASELINE = {
    "en-retry": (("retry-v2", "export-v2"), EN_OK),
    "zh-transfer": (("member-transfer",), ZH_OK),
    "zh-refund": (("refund-policy-2026", "member-transfer"), ZH_FULL),
    "zh-none": (("member-transfer",), REFUSE),
}
CANDIDATE = {
    **BASELINE,
    "en-retry": (("retry-v2", "export-v2"), "Wait 60 seconds before retrying."),  # was ok: now unsupported
    "zh-refund": (
        ("refund-policy-2026", "finance-discounts"),
        ZH_FULL,
    ),  # a finance document to a support user
}
RULES = """
run = "candidate"
baseline = "baseline"

[[rule]]
name = "no permission violations"
metric = "layer:permission_violation"
max = 0

[[rule]]
metric = "correct_refusal_rate"
where = { risk = "high", expected_behavior = "refuse" }
min = 0.85

[[rule]]
metric = "recall@5"
min = 0.75

[[rule]]
name = "no regressions"
metric = "regressions"
max = 0
"""


def gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "gate", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("gate")
    rules = tmp / "gates.toml"
    rules.write_text(RULES, encoding="utf-8")
    srv = start_server(tmp)
    try:
        srv.http.post("/api/v1/kb", content=jsonl(KB))
        srv.http.post("/api/v1/gold", content=jsonl(GOLD))
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("gate")
        ids = [
            rag_trace(
                tracer, query=QUERY[cid], answer=answer, candidates=docs(cands), case_id=cid, run_id=run
            )
            for run, plan in (("baseline", BASELINE), ("candidate", CANDIDATE))
            for cid, (cands, answer) in plan.items()
        ]
        provider.shutdown()
        wait_evaluated(srv, ids)
        roots = dict(srv.sql("SELECT case_id, root_cause FROM attribution WHERE run_id = 'candidate'"))
        assert roots == {"en-retry": "unsupported_claims", "zh-transfer": "ok",
                         "zh-refund": "permission_violation",
                         "zh-none": "ok"}  # fmt: skip
        # through the running server
        p = gate("--rules", str(rules), "--server", srv.url)
        assert p.returncode == 1, p.stdout + p.stderr
        assert "no regressions" in p.stdout
    finally:
        srv.stop()
    return Path(srv.settings.db), rules


def test_gate_fails_on_seeded_regression(seeded: tuple[Path, Path]) -> None:
    db, rules = seeded
    p = gate("--rules", str(rules), "--db", str(db))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "2 of 4 gates failed" in p.stdout
    assert "2/1" not in p.stdout  # a count has no denominator
    reasons = p.stdout.split("gates failed:")[1]
    assert "no permission violations: zh-refund" in reasons
    assert "no regressions: en-retry (unsupported_claims), zh-refund (permission_violation)" in reasons
    assert "correct_refusal_rate" not in reasons and "recall@5" not in reasons


def test_gate_passes_on_baseline(seeded: tuple[Path, Path]) -> None:
    db, rules = seeded
    p = gate("--rules", str(rules), "--db", str(db), "--run", "baseline")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all 4 gates passed" in p.stdout
