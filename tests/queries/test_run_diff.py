"""``run_diff`` through a real server: cases paired between two runs by case id, each marked fixed,
regressed, changed, same, only_base or only_new; with several traces of a case in a run, the latest."""

from __future__ import annotations

from queries import load_query
from tests.attribution.conftest import start_server, wait_evaluated
from tests.attribution.data import GOLD, KB, PLANTS, QUERY, docs, jsonl
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

EN, ZH = PLANTS["en"], PLANTS["zh"]
REFUSE_EN = ("en-none", ("retention-v2",), None, "I don't know. Please contact the support team.", None, True)
# run -> plants in send order (a later trace of the same case replaces an earlier one)
RUNS = {
    "base": [EN["unsupported_claims"], ZH["ok"], ZH["stale_context"], EN["incomplete_answer"], REFUSE_EN,
             ("en-current", ("retention-v2",), None, "Logs are retained for 7 days.", None, True)],
    "new": [ZH["ok"], EN["unsupported_claims"], EN["ok"], ZH["invalid_citation"], ZH["permission_violation"],
            EN["incomplete_answer"], REFUSE_EN, ZH["answered_unanswerable"]],
}  # fmt: skip
EXPECTED = {
    # case: (base root cause, new root cause, change)
    "en-retry": ("unsupported_claims", "ok", "fixed"),
    "zh-transfer": ("ok", "invalid_citation", "regressed"),
    "zh-refund": ("stale_context", "permission_violation", "changed"),
    "en-two": ("incomplete_answer", "incomplete_answer", "same"),
    "en-none": ("ok", "ok", "same"),
    "en-current": ("ok", None, "only_base"),
    "zh-none": (None, "answered_unanswerable", "only_new"),
}


def test_run_diff_pairs_cases(tmp_path) -> None:
    srv = start_server(tmp_path)
    try:
        srv.http.post("/api/v1/kb", content=jsonl(KB))
        srv.http.post("/api/v1/gold", content=jsonl(GOLD))
        provider = http_provider(srv.url, batch=True)  # a trace's start time is its root's start: send order
        tracer = provider.get_tracer("run-diff")
        ids: dict[str, list[str]] = {}
        for run, plants in RUNS.items():
            for case_id, cands, reranked, answer, citations, retrieve in plants:
                t = rag_trace(
                    tracer, query=QUERY[case_id], answer=answer, candidates=docs(cands),
                    reranked=docs(reranked) if reranked else None, citations=citations, retrieve=retrieve,
                    case_id=case_id, run_id=run,
                )  # fmt: skip
                ids.setdefault(f"{run}/{case_id}", []).append(t)
        provider.shutdown()
        wait_evaluated(srv, [t for ts in ids.values() for t in ts])
        q = load_query("run_diff")
        r = srv.http.post(
            "/api/v1/sql", json={"sql": q.sql, "params": q.bind({"base_run": "base", "new_run": "new"})}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        rows = {row[0]: dict(zip(body["columns"], row, strict=True)) for row in body["rows"]}
        got = {c: (r["base_root_cause"], r["new_root_cause"], r["change"]) for c, r in rows.items()}
        assert got == EXPECTED
        # the pair is made of the latest trace of each case in each run
        assert rows["en-retry"]["new_trace_id"] == ids["new/en-retry"][-1]
        assert rows["en-retry"]["base_trace_id"] == ids["base/en-retry"][0]
        assert rows["zh-none"]["base_trace_id"] is None
        # swapping the runs swaps fixed and regressed
        r = srv.http.post(
            "/api/v1/sql", json={"sql": q.sql, "params": {"base_run": "new", "new_run": "base"}}
        )
        swapped = {row[0]: row[4] for row in r.json()["rows"]}
        assert swapped["en-retry"] == "regressed" and swapped["zh-transfer"] == "fixed"
        assert swapped["en-current"] == "only_new" and swapped["zh-none"] == "only_base"
    finally:
        srv.stop()
