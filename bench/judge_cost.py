"""Tokens the judge spends per 1,000 judged traces at the default prompt (v1), measured on the
examples in the examples/ folder (or the folders given).

Each gold case becomes a judged trace: its context is the case's evidence documents plus its
negative documents, its answer states the required facts (a refusal for an unanswerable case). The
six judge evaluators run against a local OpenAI-compatible endpoint that reports usage as
characters / 4 and answers with realistic JSON (one claim per answer clause). Prints tokens per
call kind and per 1,000 traces. Run: ``python -m bench.judge_cost [EXAMPLE_DIR ...]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import GoldCase, KBDocument
from evaluators.judge.client import JudgeClient
from evaluators.judge.judge import Judge
from evaluators.judge.settings import JudgeSettings
from evaluators.lexical import split_claims
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.registry import discover
from evaluators.service.runner import Runner
from evaluators.trace_view import StepDoc, StepInfo, TraceView
from tests.judge.fakellm import FakeLLM


def realistic(user: str) -> dict | None:
    if "atomic claims" in user:
        answer = user.split("ANSWER:\n", 1)[1].split("\n\nReply with JSON", 1)[0]
        return {
            "claims": [{"text": c, "verdict": "supported", "sentence": "S1"} for c in split_claims(answer)]
        }
    if "required FACT" in user:
        ids = [
            ln.split(":", 1)[0]
            for ln in user.split("FACTS (id first):", 1)[1].split("TEXT", 1)[0].splitlines()
            if ":" in ln
        ]
        return {"facts": [{"id": i.strip(), "verdict": "supported", "sentence": "S1"} for i in ids]}
    return None


def inputs(folder: Path) -> list[EvalInput]:
    docs = [
        KBDocument.model_validate(json.loads(x))
        for x in (folder / "kb.jsonl").read_text().splitlines()
        if x.strip()
    ]
    kb = KnowledgeBase(docs)
    out = []
    for n, line in enumerate((folder / "gold.jsonl").read_text().splitlines()):
        if not line.strip():
            continue
        case = GoldCase.model_validate(json.loads(line))
        ids = [e.doc_id for e in case.evidence if getattr(e, "doc_id", None)] + list(case.negative_doc_ids)
        ctx = [
            StepDoc("llm", "context", i, d, None, kb.get(d).content, None, None, "span")
            for i, d in enumerate(ids)
            if kb.get(d)
        ]
        cjk = any("\u4e00" <= ch <= "\u9fff" for ch in case.query)
        if case.answerable:
            answer = (
                "；".join(f.text for f in case.required_facts) + "。"
                if cjk
                else ". ".join(f.text for f in case.required_facts) + "."
            )
        else:
            answer = (
                "资料里没有相关信息，建议咨询人工客服。" if cjk else "I don't know; the documents do not say."
            )
        step = StepInfo("llm", None, "llm", "llm", None, None, None, None, output_text=answer)
        view = TraceView(
            trace_id=f"{folder.name}-{n}",
            query_text=case.query,
            answer_text=answer,
            answer_span_id="llm",
            steps=(step,),
            documents=tuple(ctx),
        )
        out.append(EvalInput(view, case, kb))
    return out


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parents[1] / "examples"
    folders = [Path(a) for a in argv] or sorted(p for p in here.iterdir() if (p / "gold.jsonl").exists())
    llm = FakeLLM().start()
    llm.responder = realistic
    try:
        settings = JudgeSettings(base_url=llm.base_url, model="cost-probe")
        client = JudgeClient(settings)
        judge = Judge(settings, client)
        specs = discover()
        runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs), tier="judge")
        traces = [i for f in folders for i in inputs(f)]
        for inp in traces:
            inp.judge = judge
            runner.run(inp)
        client.close()
    finally:
        llm.stop()
    p = sum(u[0] for u in llm.usage)
    c = sum(u[1] for u in llm.usage)
    n = len(traces)
    print(
        f"{n} judged traces from {', '.join(f.name for f in folders)}; {llm.calls} judge calls "
        f"({llm.calls / n:.2f} per trace)"
    )
    print(f"prompt tokens {p} ({p / n:.0f} per trace), completion tokens {c} ({c / n:.0f} per trace)")
    print(
        f"per 1,000 judged traces: {p / n * 1000:,.0f} prompt + {c / n * 1000:,.0f} completion tokens "
        f"= {(p + c) / n * 1000:,.0f} tokens"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
