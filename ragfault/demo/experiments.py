"""``ragfault demo --experiments``: after the demo run, the experiments on the same collector.

- ``demo-v2`` fixes four of the planted failures (the stale index entries removed, the reranker's cut
  widened, the router made to search) and breaks one case: ``ragfault compare`` against ``demo-v1``.
- ``demo-v2-closed`` answers the same questions with retrieval switched off
  (``ragfault.baseline_of = demo-v2``): each case helped, hurt, parametric or neither.
- ``demo-conflicts`` runs three cases against a knowledge base with stale copies planted by
  ``ragfault kb conflicts``: one answer follows the stale copy, one the current document, one stale
  copy is cut before the context.
- a reload then changes the 2026 refund policy: the cases that must be re-run.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.store import verdicts
from evaluators.gold import GoldCase, KBDocument
from ragfault.demo.app import HelpdeskApp, ScriptedLLM
from ragfault.demo.scenarios import RUN_ID, SCENARIOS, Scenario, chunks_for, read_jsonl
from ragfault.experiments import conflicts

RUN_V2 = "demo-v2"
RUN_CLOSED = "demo-v2-closed"
RUN_CONFLICTS = "demo-conflicts"
DONT_KNOW = "I don't know the answer to that."

# demo-v2: what changed, case by case (every other scenario runs as in demo-v1)
V2: dict[str, dict[str, Any]] = {
    "retention-standard": {"ranked": ("retention-2026", "export-formats"),
                           "answer": "Logs are retained for 7 days on the Standard plan."},
    "refund-day-20": {"ranked": ("refund-policy-2026", "member-transfer"),
                      "answer": "30 天内可申请退款，按剩余天数计算退款金额。"},
    "api-rate-limit": {"keep": 4, "answer": "The API allows 600 requests per minute per project."},
    "r17-meaning": {"search": True, "ranked": ("retry-r17", "api-limits"),
                    "answer": "Error R-17 means the request was rate limited."},
    "sso-protocols": {"answer": "Single sign-on supports SAML 2.0."},  # the regression
}  # fmt: skip
# demo-v2-closed: what the model answers without any document (everything else: it does not know)
CLOSED = {
    "retry-wait": "Wait 30 seconds before retrying.",
    "sso-protocols": "Single sign-on supports SAML 2.0 and OpenID Connect.",
    "member-transfer": "会员权益仅限本人账号使用，不能转给家人。",
    "refund-day-20": "7 天内可全额退款。",
    "retention-and-export": "Logs are kept for 90 days on the Enterprise plan.",
}


def _send(
    url: str, runs: list[tuple[str, list[Scenario], dict[str, dict[str, Any]], dict[str, str] | None]]
) -> int:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "helpdesk-demo", "service.version": "2.0"})
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    n = 0
    for run_id, scenarios, kb, attrs in runs:
        app = HelpdeskApp(
            provider.get_tracer("ragfault.demo.helpdesk"),
            ScriptedLLM({s.question: s.answer for s in scenarios}),
        )
        for s in scenarios:
            app.answer(s.question, chunks_for(s, kb), user_scope=s.user_scope, keep=s.keep, search=s.search,
                       citations=s.citations, case_id=s.case_id, run_id=run_id, attributes=attrs)  # fmt: skip
            n += 1
    provider.force_flush()
    provider.shutdown()
    return n


def v2_scenarios() -> list[Scenario]:
    return [replace(s, **V2.get(s.case_id or "", {})) for s in SCENARIOS if s.case_id]


def closed_scenarios() -> list[Scenario]:
    return [replace(s, search=False, citations=None, answer=CLOSED.get(s.case_id or "", DONT_KNOW))
            for s in SCENARIOS if s.case_id]  # fmt: skip


def conflict_plan(
    kb: list[KBDocument], gold: list[GoldCase]
) -> tuple[list[KBDocument], list[GoldCase], list[Scenario]]:
    """Three cases against stale copies: followed, not followed, kept out of the context."""
    new_kb, cases, planted = conflicts.plant(kb, gold, cases=3, seed=0)
    by_case = {c: p for p in planted for c in p.case_ids}
    base = {s.case_id: s for s in SCENARIOS if s.case_id}
    current = {s.case_id: s for s in v2_scenarios()}
    out = []
    for i, case in enumerate(cases):
        p = by_case[case.case_id]
        answer = current[case.case_id].answer
        if i == 0:  # the answer follows the stale copy: its values instead of the current ones
            for cur, old in p.values:
                answer = answer.replace(cur, old)
            out.append(replace(base[case.case_id], ranked=(p.stale_doc_id, p.doc_id), keep=2, answer=answer,
                               search=True, citations=None))  # fmt: skip
        elif i == 1:  # the stale copy reaches the context; the answer follows the current document
            out.append(replace(base[case.case_id], ranked=(p.stale_doc_id, p.doc_id), keep=2, answer=answer,
                               search=True, citations=None))  # fmt: skip
        else:  # the reranker keeps only the current document
            out.append(replace(base[case.case_id], ranked=(p.doc_id, p.stale_doc_id), keep=1, answer=answer,
                               search=True, citations=None))  # fmt: skip
    return new_kb, cases, out


def _jsonl(rows: list[Any]) -> bytes:
    return b"".join(orjson.dumps(r.model_dump(mode="json", exclude_none=True)) + b"\n" for r in rows)


def _wait(http: httpx.Client, n: int, timeout: float = 60) -> None:
    def on_server(sql: str, params: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = http.post("/api/v1/sql", json={"sql": sql, "params": params}).json()
        return answer

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = verdicts.progress(on_server)
        if r[0] >= n and r[1] >= n:
            return
        time.sleep(0.1)
    raise TimeoutError(f"traces were not all evaluated within {timeout:g} s")


def run_experiments(url: str, already: int) -> dict[str, Any]:
    """Send the experiment runs to the collector at ``url`` (which holds ``already`` traces), wait
    until they are evaluated, change a document; returns what was planted."""
    kb_rows = read_jsonl("kb.jsonl")
    kb = [KBDocument.model_validate(d) for d in kb_rows]
    gold = [GoldCase.model_validate(c) for c in read_jsonl("gold.jsonl")]
    kb_dict = {str(d["doc_id"]): d for d in kb_rows}
    with httpx.Client(base_url=url, timeout=60) as http:
        # one export each, in order: each case's latest trace is then the closed-book one
        n = already + _send(url, [(RUN_V2, v2_scenarios(), kb_dict, None)])
        n += _send(url, [(RUN_CLOSED, closed_scenarios(), kb_dict, {"ragfault.baseline_of": RUN_V2})])
        _wait(http, n)
        new_kb, cases, plan = conflict_plan(kb, gold)
        http.post("/api/v1/kb", content=_jsonl(new_kb)).raise_for_status()
        http.post("/api/v1/gold?dataset=helpdesk-conflicts", content=_jsonl(cases)).raise_for_status()
        new_dict = {d.doc_id: d.model_dump(mode="json") for d in new_kb}
        n += _send(url, [(RUN_CONFLICTS, plan, new_dict, None)])
        _wait(http, n)
        # the 2026 refund policy changes: 30 days become 45
        since = datetime.now(UTC).replace(tzinfo=None).isoformat()
        changed = [d.model_copy(update={"content": (d.content or "").replace("30 天", "45 天"), "version": "2026.2"})
                   if d.doc_id == "refund-policy-2026" else d for d in new_kb]  # fmt: skip
        http.post("/api/v1/kb", content=_jsonl(changed)).raise_for_status()
    return {"conflict_cases": [c.case_id for c in cases], "since": since}


def print_experiments(q: Any, since: str | None = None, fmt: str = "text") -> None:
    """What the experiments show, read from the database."""
    from ragfault import compare
    from ragfault.experiments import affected
    from ragfault.experiments.report import closed_book_section, conflicts_section
    from ragfault.output import table

    print(f"\n######## Experiments ########\n\nragfault compare --run {RUN_V2} --baseline {RUN_ID}\n")
    cmp = compare.build(q, run_id=RUN_V2, baseline=RUN_ID)
    overall = {**cmp, "metrics": [m for m in cmp["metrics"] if m["category"] is None]}
    print(compare.render(overall, fmt))
    for title, sec in (("Closed-book baseline", closed_book_section(q, RUN_V2)),
                       ("Conflict samples", conflicts_section(q, RUN_CONFLICTS))):  # fmt: skip
        print(f"== {title} ==  ({sec['note'] if sec else ''})")
        print(table(sec["columns"], sec["rows"]) if sec else "(none)")
        print()
    cb = q(_sql("closed_book"), {"run_id": RUN_V2, "closed_run": None, "strong_categories": "policy,pricing"})
    cols = ["case_id", "outcome", "reliance", "flagged"]
    at = [cb["columns"].index(c) for c in cols]
    print("closed-book outcome per case:")
    print(table(cols, [[row[i] for i in at] for row in cb["rows"]]))
    out = affected.changes(q, since=since)
    print(f"\n== A document changed: {', '.join(sorted({c['doc_id'] for c in out['changes']}))} ==")
    cols = ["case_id", "run_id", "doc_id", "why", "predates_change"]
    print(table(cols, [[r[c] for c in cols] for r in out["affected"]]))
    print(f"{len(out['affected_not_rerun'])} cases to re-run: {', '.join(out['affected_not_rerun'])}")


def _sql(name: str) -> str:
    from queries import load_query

    return load_query(name).sql
