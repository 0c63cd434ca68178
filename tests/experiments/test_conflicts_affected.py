"""Conflict samples and knowledge-base changes through a real server: ``ragfault kb conflicts``
plants stale copies, traces that retrieve them are evaluated (``follows_stale``), the run's
follows-stale rate is read by the report and the gates; a reload that changes a document lists the
cases to re-run until they are."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.gold import GoldCase, KBDocument
from ragfault.experiments import conflicts
from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import GOLD, KB, QUERY, jsonl
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragfault.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_plant_changes_key_numbers_and_supersedes_with_earlier_validity() -> None:
    kb = [KBDocument(**d) for d in KB]
    gold = [GoldCase(**c) for c in GOLD]
    new_kb, cases, planted = conflicts.plant(kb, gold, cases=3, seed=1)
    # policy cases first: zh-refund is the only policy case whose evidence holds a number
    assert cases[0].case_id == "zh-refund"
    assert len(cases) == 3 and all(c.answerable for c in cases)
    by_id = {d.doc_id: d for d in new_kb}
    assert len(new_kb) == len(kb) + len(planted)
    for p in planted:
        stale, orig = by_id[p.stale_doc_id], by_id[p.doc_id]
        assert stale.superseded_by == orig.doc_id
        assert (
            stale.valid_to == orig.valid_from
            and stale.valid_from is not None
            and stale.valid_from < orig.valid_from
        )
        assert stale.content != orig.content
        for current, old in p.values:
            assert current != old and old not in (orig.content or "").split()
        assert p.stale_doc_id in next(c for c in cases if c.case_id == p.case_ids[0]).negative_doc_ids
    refund = next(p for p in planted if p.doc_id == "refund-policy-2026")
    assert [c for c, _ in refund.values] == ["30"]  # the key number of the quote, not the year
    assert conflicts.plant(kb, gold, cases=3, seed=1) == (new_kb, cases, planted)  # seeded


@pytest.fixture(scope="module")
def conflict_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("conflicts")
    (tmp / "kb.jsonl").write_bytes(jsonl(KB))
    (tmp / "gold.jsonl").write_bytes(jsonl(GOLD))
    p = cli(
        "kb", "conflicts", "--kb", "kb.jsonl", "--gold", "gold.jsonl", "--out", "out", "--seed", "3", cwd=tmp
    )
    assert p.returncode == 0, p.stderr
    assert "stale copies planted" in p.stdout
    manifest = {m["doc_id"]: m for m in read_jsonl(tmp / "out" / "manifest.jsonl")}
    content = {d["doc_id"]: d["content"] for d in read_jsonl(tmp / "out" / "kb.jsonl")}
    for srv in serve(tmp / "server"):
        assert srv.http.post("/api/v1/kb", content=(tmp / "out" / "kb.jsonl").read_bytes()).status_code == 200
        assert (
            srv.http.post("/api/v1/gold", content=(tmp / "out" / "gold.jsonl").read_bytes()).status_code
            == 200
        )
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("conflicts")

        def doc(i: str) -> dict[str, Any]:
            return {"id": i, "content": content[i]}

        refund_stale = manifest["refund-policy-2026"]["values"][0]["stale"]
        scope = {c["case_id"]: c["user_scope"] for c in GOLD}
        plan = {  # case -> (candidates, kept, answer)
            # the stale copy reaches the context and the answer follows it
            "zh-refund": (
                ("refund-policy-2026-stale", "refund-policy-2026"),
                None,
                f"{refund_stale} 天内可申请退款。",
            ),
            # the stale copy reaches the context, the answer follows the current version
            "en-current": (("retention-v2-stale", "retention-v2"), None, "Logs are retained for 7 days."),
            # retrieved, then kept out of the context by the reranker
            "en-retry": (("retry-v2-stale", "retry-v2"), ("retry-v2",), "Wait 30 seconds before retrying."),
        }
        ids = {}
        for case_id, (cands, kept, answer) in plan.items():
            ids[case_id] = rag_trace(
                tracer, query=QUERY[case_id], answer=answer, candidates=[doc(i) for i in cands],
                reranked=[doc(i) for i in kept] if kept else None, case_id=case_id, run_id="conf",
                user_scope=scope[case_id],
            )  # fmt: skip
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, tmp, {"ids": ids, "manifest": manifest}


def test_follows_stale_per_trace_and_rate(conflict_run: tuple[Server, Path, dict[str, Any]]) -> None:
    srv, tmp, state = conflict_run
    rows = srv.sql(
        "SELECT case_id, stale_retrieved, stale_in_context, kept_out, follows_stale, stale_values "
        "FROM (" + _bundled("follows_stale") + ")", run_id="conf")  # fmt: skip
    got = {r[0]: tuple(r[1:5]) for r in rows}
    assert got == {
        "zh-refund": (True, True, False, True),
        "en-current": (True, True, False, False),
        "en-retry": (True, False, True, False),
    }
    values = {r[0]: r[5] for r in rows}
    assert values["zh-refund"] == [f"{state['manifest']['refund-policy-2026']['values'][0]['stale']} day"]

    rep = cli("report", "--server", srv.url, "--run", "conf", cwd=tmp)
    section = rep.stdout.split("== Stale versions (conflict samples) ==", 1)[1]
    line = next(x for x in section.splitlines() if x.startswith("conf "))
    assert line.split()[:7] == ["conf", "3", "3", "1", "2", "1", "0.5"]

    rules = tmp / "rules.toml"
    rules.write_text('run = "conf"\n[[rule]]\nmetric = "follows_stale_rate"\nmax = 0.25\n', encoding="utf-8")
    g = cli("gate", "--server", srv.url, "--rules", str(rules), cwd=tmp)
    assert g.returncode == 1 and "1/2" in g.stdout and "zh-refund" in g.stdout, g.stdout


def test_kb_change_lists_affected_cases_until_rerun(
    conflict_run: tuple[Server, Path, dict[str, Any]],
) -> None:
    srv, tmp, state = conflict_run
    assert srv.http.get("/api/v1/kb/changes").json()["changes"] == []  # loading the same KB changes nothing
    changed = [{**d, "content": d["content"].replace("30 天", "45 天"), "version": "2026b"}
               if d["doc_id"] == "refund-policy-2026" else d
               for d in read_jsonl(tmp / "out" / "kb.jsonl")]  # fmt: skip
    assert srv.http.post("/api/v1/kb", content=jsonl(changed)).status_code == 200
    out = srv.http.get("/api/v1/kb/changes").json()
    assert [(c["doc_id"], c["change"], c["old_version"], c["new_version"]) for c in out["changes"]] == [
        ("refund-policy-2026", "content,version", "2026", "2026b")
    ]
    affected = {(r["case_id"], r["why"], r["predates_change"]) for r in out["affected"]}
    assert affected == {("zh-refund", "evidence, retrieved", True)}
    assert out["affected_not_rerun"] == ["zh-refund"]

    rules = tmp / "affected.toml"
    rules.write_text('[[rule]]\nmetric = "affected_not_rerun"\nmax = 0\n', encoding="utf-8")
    g = cli("gate", "--server", srv.url, "--rules", str(rules), cwd=tmp)
    assert g.returncode == 1 and "zh-refund" in g.stdout, g.stdout
    text = cli("affected", "--server", srv.url, cwd=tmp)
    assert "1 to re-run: zh-refund" in text.stdout, text.stdout

    # re-running the case clears it
    current = next(d["content"] for d in changed if d["doc_id"] == "refund-policy-2026")
    provider = http_provider(srv.url, batch=True)
    tid = rag_trace(provider.get_tracer("rerun"), query=QUERY["zh-refund"], answer="45 天内可申请退款。",
                    candidates=[{"id": "refund-policy-2026", "content": current}], case_id="zh-refund",
                    run_id="conf-2", user_scope=["support"])  # fmt: skip
    provider.shutdown()
    wait_evaluated(srv, [tid])
    out = srv.http.get("/api/v1/kb/changes").json()
    assert out["affected_not_rerun"] == [] and [r["rerun"] for r in out["affected"]] == [True]
    assert cli("gate", "--server", srv.url, "--rules", str(rules), cwd=tmp).returncode == 0


def _bundled(name: str) -> str:
    from queries import load_query

    return load_query(name).sql
