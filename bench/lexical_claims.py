"""The lexical tier on answers real systems write: a labelled set of claim/context pairs.

``bench/lexical/claims.jsonl`` holds 204 pairs in English and Chinese: each context sentence with
faithful paraphrases (label ``supported``) and claims a careful reader would not call supported
(``unsupported``): a changed number, unit or period (per day -> per hour), date or identifier, a
named thing the context never mentions, a flipped negation, an added clause. A pair is judged the
way the answer-support evaluator judges an answer: the claim text split into claims
(``lexical.split_claims``), each checked against the context's sentences (``lexical.support``);
the pair is predicted supported when every claim is.

Prints balanced accuracy (the mean of the recall on supported and on unsupported pairs), the
false-unsupported rate on paraphrases, per-kind and per-language accuracy and, with ``--errors``,
every pair judged wrongly. Figures before and after the checker's changes: ``bench/README.md``.

    python bench/lexical_claims.py [--errors] [--min-coverage 0.6]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators import lexical  # noqa: E402

SET = Path(__file__).resolve().parent / "lexical" / "claims.jsonl"


def load(path: Path = SET) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def predict(claim: str, context: str, min_coverage: float = lexical.DEFAULT_MIN_COVERAGE) -> str:
    sents = lexical.sentences(context)
    claims = lexical.split_claims(claim)
    if not claims:
        return "unsupported"
    ok = all(lexical.support(c, sents, min_coverage).label == "supported" for c in claims)
    return "supported" if ok else "unsupported"


def evaluate(
    rows: list[dict[str, Any]], min_coverage: float = lexical.DEFAULT_MIN_COVERAGE
) -> dict[str, Any]:
    """Counts and rates over the set: exact numbers, so a test can pin them."""
    judged = [{**r, "predicted": predict(r["claim"], r["context"], min_coverage)} for r in rows]
    pos = [r for r in judged if r["label"] == "supported"]
    neg = [r for r in judged if r["label"] == "unsupported"]
    tp = sum(r["predicted"] == "supported" for r in pos)
    tn = sum(r["predicted"] == "unsupported" for r in neg)
    para = [r for r in judged if r["kind"] == "paraphrase"]
    by_kind: dict[str, list[int]] = {}
    by_lang: dict[str, list[int]] = {}
    for r in judged:
        for key, table in ((r["kind"], by_kind), (r["lang"], by_lang)):
            cell = table.setdefault(key, [0, 0])
            cell[0] += r["predicted"] == r["label"]
            cell[1] += 1
    return {
        "pairs": len(judged),
        "supported": len(pos),
        "unsupported": len(neg),
        "true_supported": tp,
        "true_unsupported": tn,
        "balanced_accuracy": (tp / len(pos) + tn / len(neg)) / 2,
        "paraphrases": len(para),
        "false_unsupported_paraphrases": sum(r["predicted"] == "unsupported" for r in para),
        "false_unsupported_rate": sum(r["predicted"] == "unsupported" for r in para) / len(para),
        "by_kind": {k: tuple(v) for k, v in sorted(by_kind.items())},
        "by_lang": {k: tuple(v) for k, v in sorted(by_lang.items())},
        "errors": [r for r in judged if r["predicted"] != r["label"]],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--errors", action="store_true", help="list every pair judged wrongly")
    ap.add_argument("--min-coverage", type=float, default=lexical.DEFAULT_MIN_COVERAGE)
    args = ap.parse_args()
    out = evaluate(load(), args.min_coverage)
    print(f"{out['pairs']} pairs ({out['supported']} supported, {out['unsupported']} unsupported; "
          f"{Counter(r['lang'] for r in load())})")  # fmt: skip
    print(f"balanced accuracy        {out['balanced_accuracy']:.3f}  "
          f"(supported {out['true_supported']}/{out['supported']}, unsupported {out['true_unsupported']}/{out['unsupported']})")  # fmt: skip
    print(f"false-unsupported rate   {out['false_unsupported_rate']:.3f}  "
          f"({out['false_unsupported_paraphrases']}/{out['paraphrases']} paraphrases)")  # fmt: skip
    print("accuracy by kind:  " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in out["by_kind"].items()))
    print("accuracy by lang:  " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in out["by_lang"].items()))
    if args.errors:
        for r in out["errors"]:
            print(
                f"  {r['id']} [{r['kind']}] label {r['label']}, judged {r['predicted']}: {r['claim']!r}  |  {r['context']!r}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
