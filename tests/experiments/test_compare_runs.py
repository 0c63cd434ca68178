"""Run comparison, repeats and the closed-book baseline through a real server: traces of four runs
sent with the OpenTelemetry exporter, evaluated, then compared by the API, the CLI and the gates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragfault import stats
from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import EN_OK, GOLD, KB, QUERY, ZH_FULL, ZH_OK, docs, jsonl
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

EN_TWO = "Logs are retained for 7 days and can be exported as JSON."
DONT_KNOW = "I don't know. Please contact the support team."
# case -> (candidates, answer) per run; "closed" is answered with retrieval switched off
RUNS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "A": {
        "en-retry": (("retry-v2",), EN_OK),
        "en-two": (("retention-v2", "export-v2"), "Logs are retained for 7 days."),  # incomplete
        "en-current": (("retention-v1", "retry-v2"), "Logs are retained for 30 days."),  # stale
        "en-none": (("retention-v2",), "Retention can be extended to 90 days."),  # answered unanswerable
        "en-invoice": (("export-v2",), DONT_KNOW),
        "zh-refund": (("refund-policy-2026",), ZH_FULL),
        "zh-transfer": (("member-transfer",), ZH_OK),
        "zh-none": (("member-transfer",), "不清楚，请咨询人工客服。"),
    },
    "B": {
        "en-retry": (("retry-v2",), EN_OK),
        "en-two": (("retention-v2", "export-v2"), EN_TWO),
        "en-current": (("retention-v2",), "Logs are retained for 7 days."),
        "en-none": (("retention-v2",), DONT_KNOW),
        "en-invoice": (("export-v2",), DONT_KNOW),
        "zh-refund": (("refund-policy-2026",), "7 天内全额退款。"),  # unsupported: regressed
        "zh-transfer": (("member-transfer",), ZH_OK),
        "zh-none": (("member-transfer",), "不清楚，请咨询人工客服。"),
    },
    "closed": {
        "en-retry": ((), EN_OK),  # parametric
        "en-two": ((), DONT_KNOW),  # helped
        "en-current": ((), "Logs are retained for 7 days."),  # parametric
        "en-none": ((), DONT_KNOW),  # parametric (refused both ways)
        "en-invoice": ((), DONT_KNOW),  # neither
        "zh-refund": ((), ZH_FULL),  # hurt
        "zh-transfer": ((), ZH_OK),  # parametric, policy: strong reliance, flagged
        "zh-none": ((), "家庭套餐 299 元一年。"),  # helped
    },
}
RUNS["A2"] = {**RUNS["A"], "zh-transfer": (("member-transfer",), "会员可以转给家人。")}  # a repeat that flips
SCOPE = {c["case_id"]: c["user_scope"] for c in GOLD}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    for srv in serve(tmp_path_factory.mktemp("compare")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("compare")
        marks = {"A": {"ragfault.run_group": "cfg-a"}, "A2": {"traceloop.association.properties.ragfault.run_group": "cfg-a"},
                 "closed": {"ragfault.baseline_of": "B"}}  # fmt: skip
        ids = []
        for run_id, cases in RUNS.items():
            for case_id, (cands, answer) in cases.items():
                ids.append(rag_trace(
                    tracer, query=QUERY[case_id], answer=answer, candidates=docs(cands), retrieve=bool(cands),
                    case_id=case_id, run_id=run_id, user_scope=SCOPE[case_id], attributes=marks.get(run_id),
                ))  # fmt: skip
        provider.shutdown()
        wait_evaluated(srv, ids)
        yield srv


def _metric(cmp: dict[str, Any], metric: str, category: str | None = None) -> dict[str, Any]:
    return next(m for m in cmp["metrics"] if m["metric"] == metric and m["category"] == category)


def test_compare_api_contract_and_case_changes(runs: Server) -> None:
    cmp = runs.http.get("/api/v1/compare", params={"run": "B", "baseline": "A", "resamples": 2000}).json()
    assert (cmp["baseline"], cmp["run"]) == ("A", "B")
    for m in cmp["metrics"]:
        assert {"metric", "category", "baseline", "run", "n", "delta", "ci_low", "ci_high"} <= set(m)
    c = cmp["cases"]
    assert c["paired"] == 8
    assert c["regressed"] == ["zh-refund"]
    assert c["improved"] == ["en-current", "en-none", "en-two"]
    assert c["mcnemar_p"] == pytest.approx(stats.mcnemar_exact(1, 3)) and c["mcnemar_p"] == 0.625

    ok = _metric(cmp, "ok_rate")
    assert ok["n"] == 8 and ok["baseline_denominator"] == 8 and ok["run_denominator"] == 8
    # A: en-retry, zh-refund, zh-transfer, zh-none ok (en-invoice is a KB gap in both runs)
    assert ok["baseline"] == 4 / 8 and ok["run"] == 6 / 8
    assert ok["delta"] == pytest.approx(2 / 8)
    assert ok["ci_low"] <= ok["delta"] <= ok["ci_high"]
    # the interval is the bootstrap of the paired per-case outcomes read from the attribution view
    res = runs.http.post(
        "/api/v1/sql",
        json={"sql": "SELECT run_id, case_id, root_cause FROM attribution WHERE run_id IN ('A', 'B')"},
    ).json()["rows"]
    by = {(r[0], r[1]): r[2] == "ok" for r in res}
    diffs = [(float(by["A", c]), 1.0, float(by["B", c]), 1.0) for c in sorted(RUNS["A"])]
    ci = stats.bootstrap_ci(diffs, resamples=2000, seed=0)
    assert ci is not None and (ok["ci_low"], ok["ci_high"]) == pytest.approx((ci.low, ci.high))

    # per category: policy holds zh-refund (regressed) and zh-transfer
    policy = _metric(cmp, "ok_rate", "policy")
    assert (policy["baseline"], policy["run"], policy["n"]) == (1.0, 0.5, 2)
    # refusal rates keep their own denominators: answerable cases for over-refusal
    over = _metric(cmp, "over_refusal_rate")
    assert over["baseline_denominator"] == 6 and over["run_denominator"] == 6
    correct = _metric(cmp, "correct_refusal_rate")
    assert (correct["baseline"], correct["run"], correct["n"]) == (0.5, 1.0, 2)


def test_compare_names_a_run_without_cases(runs: Server, tmp_path: Path) -> None:
    r = runs.http.get("/api/v1/compare", params={"run": "nope", "baseline": "A"})
    assert r.status_code == 400 and "run 'nope' has no evaluated trace" in r.json()["detail"]
    p = cli("compare", "--server", runs.url, "--run", "B", "--baseline", "nope", cwd=tmp_path)
    assert p.returncode == 1 and "run 'nope' has no evaluated trace" in p.stderr


def test_repeats_give_spread_and_flip_rate(runs: Server) -> None:
    assert runs.http.put("/api/v1/runs/B", json={"run_group": "cfg-b"}).status_code == 200
    cmp = runs.http.get("/api/v1/compare", params={"run": "B", "baseline": "A", "resamples": 200}).json()
    reps = {r["group"]: r for r in cmp["repeats"]}
    assert reps["cfg-a"]["runs"] == ["A", "A2"]
    assert reps["cfg-b"]["runs"] == ["B"]
    ok = next(m for m in reps["cfg-a"]["metrics"] if m["metric"] == "ok_rate")
    assert ok["runs"] == 2 and ok["mean"] == pytest.approx((4 / 8 + 3 / 8) / 2)
    assert ok["sd"] == pytest.approx(stats.mean_sd([4 / 8, 3 / 8])[1])
    flips = {f["case_id"]: f["flip_rate"] for f in reps["cfg-a"]["cases"]}
    assert flips["zh-transfer"] == 1.0
    assert all(v == 0.0 for c, v in flips.items() if c != "zh-transfer")
    marks = {r["run_id"]: r for r in runs.http.get("/api/v1/runs").json()["runs"]}
    assert marks["A2"]["run_group"] == "cfg-a" and marks["A2"]["source"] == "traces"
    assert marks["B"]["source"] == "api" and marks["closed"]["baseline_of"] == "B"


def test_closed_book_outcomes(runs: Server) -> None:
    rows = runs.http.post("/api/v1/sql", json={
        "sql": "SELECT case_id, outcome, reliance, flagged FROM (" + _bundled("closed_book") + ")",
        "params": {"run_id": "B", "closed_run": None, "strong_categories": "policy,pricing"}}).json()["rows"]  # fmt: skip
    got = {r[0]: (r[1], r[2], r[3]) for r in rows}
    assert got == {
        "en-retry": ("parametric", "supplementary", False),
        "en-two": ("helped", "supplementary", False),
        "en-current": ("parametric", "supplementary", False),
        "en-none": ("parametric", "supplementary", False),
        "en-invoice": ("neither", "supplementary", False),
        "zh-refund": ("hurt", "strong", False),
        "zh-transfer": ("parametric", "strong", True),
        "zh-none": ("helped", "supplementary", False),
    }


def _bundled(name: str) -> str:
    from queries import load_query

    return load_query(name).sql


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragfault.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_cli_compare_report_and_gates(runs: Server, tmp_path: Path) -> None:
    p = cli("compare", "--server", runs.url, "--run", "B", "--baseline", "A", "--format", "json",
            "--resamples", "500", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    assert body["cases"]["regressed"] == ["zh-refund"]
    text = cli(
        "compare", "--server", runs.url, "--run", "B", "--baseline", "A", "--resamples", "500", cwd=tmp_path
    )
    assert "McNemar exact p = 0.625" in text.stdout and "Repeats of cfg-a" in text.stdout

    rep = cli("report", "--server", runs.url, "--run", "B", cwd=tmp_path)
    assert "== Closed-book baseline ==" in rep.stdout
    section = rep.stdout.split("== Closed-book baseline ==", 1)[1]
    line = next(x for x in section.splitlines() if x.startswith("B "))
    assert line.split()[:7] == ["B", "closed", "2", "1", "4", "1", "0"]
    assert "zh-transfer" in line

    rules = tmp_path / "rules.toml"
    rules.write_text(
        'run = "B"\nbaseline = "A"\nresamples = 1000\n'
        '[[rule]]\nmetric = "ok_rate"\nmin_delta = 0\nsignificant = true\n'
        '[[rule]]\nmetric = "retrieval_hurt"\nmax = 0\n'
        '[[rule]]\nmetric = "parametric_share"\nmax = 0.6\n', encoding="utf-8")  # fmt: skip
    g = cli("gate", "--server", runs.url, "--rules", str(rules), cwd=tmp_path)
    assert g.returncode == 1, g.stdout
    out = {}
    for ln in g.stdout.splitlines():
        if ln.startswith(("PASS", "FAIL")):
            cells = [c.strip() for c in re.split(r"\s{2,}", ln)]
            out[cells[1]] = cells[0]
    assert out == {"ok_rate delta >= 0 (significant)": "PASS", "retrieval_hurt <= 0": "FAIL",
                   "parametric_share <= 0.6": "PASS"}  # fmt: skip
    assert "zh-refund" in g.stdout
