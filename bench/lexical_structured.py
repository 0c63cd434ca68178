"""The three-valued lexical tier (``evaluators.lexical.claims``) on the structured claim set.

``bench/lexical/structured.jsonl`` (grown by ``bench/lexical/generate.py`` from hand-written seeds)
holds claim/context pairs in English and Chinese with a category and a label each. A pair is judged
the way the answer-support evaluator judges an answer: the claim text split into claims
(``lexical.split_claims``), each checked against the context's sentences; the pair is *unsupported*
when any claim is contradicted or unsupported, *supported* when every claim is supported, else
*undecided*.

Prints, overall, per language and per category: how many pairs the tier decides, the precision of
"unsupported" (what it flags that is really unsupported), and the balanced accuracy over decided
pairs (the mean of the recall on supported and on unsupported pairs among those decided). With
``--set claims`` it reads the older ``bench/lexical/claims.jsonl`` (``kind`` as the category).
``--cost`` times answer support per claim on the set both ways (splitting the answer, then the
older two-valued ``lexical.support`` or ``check_claim`` on each claim; the context side read
beforehand, as documents recur; CPU time, least of five alternating passes): the A/B of the cost per claim.

    python bench/lexical_structured.py [--errors] [--set structured|claims] [--cost]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators import lexical  # noqa: E402
from evaluators.lexical import analysis, checking, claim_split, sentence_split  # noqa: E402
from evaluators.lexical import claims as lexical_claims  # noqa: E402
from evaluators.lexical import reading as lexical_reading  # noqa: E402
from evaluators.lexical import values as lexical_values  # noqa: E402

HERE = Path(__file__).resolve().parent / "lexical"
SETS = {"structured": HERE / "structured.jsonl", "claims": HERE / "claims.jsonl"}


def load(name: str = "structured") -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SETS[name].read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        r.setdefault("category", r.get("kind", "?"))
    return rows


def predict(claim: str, context: str) -> str:
    sents = lexical.sentences(context)
    claims = lexical.split_claims(claim) or [claim]
    labels = [lexical_claims.check_claim(c, sents).label for c in claims]
    if any(lab in ("contradicted", "unsupported") for lab in labels):
        return "unsupported"
    if all(lab == "supported" for lab in labels):
        return "supported"
    return "undecided"


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Decided share, precision of unsupported and balanced accuracy over decided pairs."""
    n = len(rows)
    decided = [r for r in rows if r["predicted"] != "undecided"]
    pos = [r for r in decided if r["label"] == "supported"]
    neg = [r for r in decided if r["label"] == "unsupported"]
    flagged = [r for r in decided if r["predicted"] == "unsupported"]
    tp = sum(r["predicted"] == "supported" for r in pos)
    tn = sum(r["predicted"] == "unsupported" for r in neg)
    recalls = [x for x in (tp / len(pos) if pos else None, tn / len(neg) if neg else None) if x is not None]
    return {
        "pairs": n,
        "decided": len(decided),
        "decided_rate": len(decided) / n if n else None,
        "flagged": len(flagged),
        "flag_precision": tn / len(flagged) if flagged else None,
        "supported_recall": (tp, len(pos)),
        "unsupported_recall": (tn, len(neg)),
        "balanced_accuracy": sum(recalls) / len(recalls) if recalls else None,
    }


def evaluate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [{**r, "predicted": predict(r["claim"], r["context"])} for r in rows]
    out: dict[str, Any] = {"all": score(judged), "by_lang": {}, "by_category": {}}
    for key, table in (("lang", out["by_lang"]), ("category", out["by_category"])):
        for value in sorted({r[key] for r in judged}):
            table[value] = score([r for r in judged if r[key] == value])
    out["errors"] = [r for r in judged if r["predicted"] not in ("undecided", r["label"])]
    out["undecided"] = [r for r in judged if r["predicted"] == "undecided"]
    return out


def _fmt(s: dict[str, Any]) -> str:
    def pct(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:5.3f}"

    return (
        f"decided {s['decided']:4d}/{s['pairs']:<4d} ({pct(s['decided_rate'])})  flag precision {pct(s['flag_precision'])}"
        f" ({s['flagged']} flagged)  balanced accuracy {pct(s['balanced_accuracy'])}"
        f"  supported {s['supported_recall'][0]}/{s['supported_recall'][1]}"
        f"  unsupported {s['unsupported_recall'][0]}/{s['unsupported_recall'][1]}"
    )


def _clear() -> None:
    for f in (lexical.analyze, analysis._scan, sentence_split._sentences, claim_split._clauses,
              checking._mismatches_of, analysis._cjk_terms, claim_split._claim_units, claim_split._split_claims,
              lexical_reading.read,
              lexical_reading._units_cached, lexical_reading._context_summary, lexical_values.read_values):  # fmt: skip
        f.cache_clear()


def cost(rows: list[dict[str, Any]], rounds: int = 5) -> dict[str, float]:
    """µs per claim of answer support as the evaluator does it: the answer split into claims, each
    checked against the context's sentences, by the two-valued ``lexical.support`` (today's) and by
    ``check_claim``. Before each timed pass every cache is cleared and the context side read again
    untimed (documents come back trace after trace, answers do not); least of ``rounds`` passes."""
    contexts = sorted({r["context"] for r in rows})
    answers = [(r["claim"], r["context"]) for r in rows]
    n_claims = sum(len(lexical.split_claims(a) or [a]) for a, _ in answers)

    def warm() -> None:
        _clear()
        for ctx in contexts:
            sents = lexical.sentences(ctx)
            for s in sents:
                lexical.analyze(s)
            lexical_reading._context_summary(tuple(sents))

    def old(answer: str, ctx: str) -> None:
        sents = lexical.sentences(ctx)
        for c in lexical.split_claims(answer) or [answer]:
            lexical.support(c, sents)

    def new(answer: str, ctx: str) -> None:
        sents = lexical.sentences(ctx)
        for c in lexical.split_claims(answer) or [answer]:
            lexical_claims.check_claim(c, sents)

    checkers: dict[str, Callable[[str, str], None]] = {
        "support (two-valued)": old,
        "check_claim (three-valued)": new,
    }
    best = dict.fromkeys(checkers, float("inf"))
    for _ in range(rounds):
        for name, fn in checkers.items():  # alternating, so that a busy machine slows both alike
            warm()
            t0 = time.process_time()  # CPU time of this process: other work on the machine aside
            for a, ctx in answers:
                fn(a, ctx)
            best[name] = min(best[name], time.process_time() - t0)
    return {name: t / n_claims * 1e6 for name, t in best.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--set", choices=sorted(SETS), default="structured")
    ap.add_argument("--errors", action="store_true", help="list pairs decided wrongly")
    ap.add_argument("--undecided", action="store_true", help="list pairs left undecided")
    ap.add_argument("--cost", action="store_true", help="time both checkers per claim")
    args = ap.parse_args()
    rows = load(args.set)
    out = evaluate(rows)
    print(f"{args.set}: {len(rows)} pairs")
    print(f"  all       {_fmt(out['all'])}")
    for k, s in out["by_lang"].items():
        print(f"  {k:<9} {_fmt(s)}")
    print("by category:")
    for k, s in out["by_category"].items():
        print(f"  {k:<19} {_fmt(s)}")
    if args.errors:
        for r in out["errors"]:
            print(
                f"  WRONG {r['id']} [{r['category']}] {r['label']} judged {r['predicted']}: {r['claim']!r} | {r['context']!r}"
            )
    if args.undecided:
        for r in out["undecided"]:
            print(f"  UNDECIDED {r['id']} [{r['category']}] {r['label']}: {r['claim']!r} | {r['context']!r}")
    if args.cost:
        for name, us in cost(rows).items():
            print(f"  {name:<28} {us:8.1f} µs a claim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
