"""Human labels and judge calibration: agreement, bias and drift per judge version.

A human label names a trace, a judge metric, optionally a claim (or fact) and a label from the
metric's vocabulary: ``supported`` / ``contradicted`` / ``unsupported`` for claims and for
``judge_answer_support`` at trace level, ``refused`` / ``answered`` / ``clarify`` for ``judge_refusal``,
``pass`` / ``fail`` for the ratio metrics. It is paired with the judge's latest verdict on the same
(trace, metric, claim) for each judge version (model + prompt version) in ``judge_verdicts``.

Per version and metric the report gives n, accuracy, Cohen's kappa ((p_o - p_e) / (1 - p_e), None
when p_e = 1), the confusion matrix (human label → judge label → count) and per label the bias:
(times the judge gave it - times humans gave it) / n, positive when the judge over-rates it.

Drift: the anchor set (labels with ``anchor``) is re-scored by each new judge version; the report
compares the new version with the baseline (the latest trusted version, else the latest other one) on
the anchor items both scored — agreement between versions and each one's accuracy against humans.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from collector.store import judging
from collector.store import rows as store_rows
from collector.store.base import Tx
from evaluators.service.runner import WriteFn
from ragfault_core.errors import PermanentError
from ragfault_core.textnorm import normalize

MIN_AGREEMENT = 0.9
MAX_ACCURACY_DROP = 0.05


class HumanLabel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_id: str = Field(..., min_length=1)
    metric: str = Field(..., min_length=1, description="The judge metric the label is about.")
    label: str = Field(..., min_length=1)
    annotator: str = Field(..., min_length=1)
    claim: str | None = Field(None, description="The claim or fact labelled; None for the whole trace.")
    span_id: str | None = None
    anchor: bool = Field(False, description="Part of the fixed anchor set re-scored when the judge changes.")
    note: str | None = None


def parse_labels(body: bytes | str) -> list[HumanLabel]:
    """A JSON array, a JSON object or JSONL; validated whole (a bad line refuses the body)."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    stripped = text.strip()
    if not stripped:
        return []
    items: list[tuple[int, Any]]
    try:
        whole = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        whole = None
        items = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((n, orjson.loads(line)))
            except orjson.JSONDecodeError as exc:
                raise PermanentError(f"line {n}: not JSON: {exc}") from exc
    else:
        items = list(enumerate(whole, 1)) if isinstance(whole, list) else [(1, whole)]
    out = []
    for n, item in items:
        try:
            out.append(HumanLabel.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(record)"
            raise PermanentError(f"label {n}: {field}: {err['msg']}") from exc
    return out


def store_labels(write: WriteFn, labels: list[HumanLabel]) -> int:
    now = datetime.now(UTC).replace(tzinfo=None)
    rows = [
        (
            lb.trace_id,
            lb.span_id,
            lb.metric,
            lb.claim,
            normalize(lb.claim) if lb.claim else None,
            lb.label,
            lb.annotator,
            lb.anchor,
            lb.note,
            now,
        )
        for lb in labels
    ]
    if rows:
        write(lambda con: judging.insert_labels(con, rows))
    return len(rows)


def agreement(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Accuracy, Cohen's kappa, confusion and per-label bias of (human, judge) label pairs."""
    n = len(pairs)
    if not n:
        return {"n": 0, "accuracy": None, "kappa": None, "confusion": {}, "labels": {}}
    human = Counter(h for h, _ in pairs)
    judge = Counter(j for _, j in pairs)
    p_o = sum(1 for h, j in pairs if h == j) / n
    p_e = sum(human[k] * judge[k] for k in human.keys() | judge.keys()) / (n * n)
    kappa = None if p_e >= 1 else (p_o - p_e) / (1 - p_e)
    confusion: dict[str, dict[str, int]] = defaultdict(dict)
    for (h, j), c in sorted(Counter(pairs).items()):
        confusion[h][j] = c
    labels = {
        k: {"human": human[k], "judge": judge[k], "bias": (judge[k] - human[k]) / n}
        for k in sorted(human.keys() | judge.keys())
    }
    return {"n": n, "accuracy": p_o, "kappa": kappa, "confusion": dict(confusion), "labels": labels}


def _versions(con: Tx) -> list[dict[str, Any]]:
    return [
        {
            "model": r[0],
            "prompt_version": r[1],
            "first_seen": r[2],
            "anchors_scored_at": r[3],
            "trusted": r[4],
        }
        for r in judging.versions(con)
    ]


def calibration_report(
    con: Tx, model: str | None = None, prompt_version: str | None = None
) -> dict[str, Any]:
    humans = judging.human_labels(con)
    judged: dict[tuple[str, str], dict[tuple[str, str, str], str]] = defaultdict(dict)
    anchor_judged: dict[tuple[str, str], dict[tuple[str, str, str], str]] = defaultdict(dict)
    for tid, metric, item, label, m, p, _source in judging.latest_verdicts(con):
        judged[(m, p)][(tid, metric, item)] = label
    for tid, metric, item, label, m, p, _ in judging.latest_verdicts(con, anchor_only=True):
        anchor_judged[(m, p)][(tid, metric, item)] = label
    versions = []
    for ver in sorted(judged.keys() | anchor_judged.keys()):
        if (model and ver[0] != model) or (prompt_version and ver[1] != prompt_version):
            continue
        by_metric: dict[str, list[tuple[str, str]]] = defaultdict(list)
        missing = 0
        for tid, metric, item, label, _ in humans:
            j = judged[ver].get((tid, metric, item))
            if j is None:
                missing += 1
                continue
            by_metric[metric].append((label, j))
        all_pairs = [p for ps in by_metric.values() for p in ps]
        versions.append({
            "model": ver[0], "prompt_version": ver[1], "unmatched_labels": missing,
            "overall": agreement(all_pairs),
            "metrics": {m: agreement(ps) for m, ps in sorted(by_metric.items())},
        })  # fmt: skip
    return {
        "human_labels": len(humans),
        "versions": versions,
        "drift": drift(con, humans, anchor_judged, model, prompt_version),
    }


def drift(
    con: Tx,
    humans: Sequence[store_rows.HumanLabel],
    anchor_judged: dict[tuple[str, str], dict[tuple[str, str, str], str]],
    model: str | None,
    prompt_version: str | None,
) -> dict[str, Any] | None:
    """The newest (or the named) version against its baseline on the anchor items both scored."""
    known = _versions(con)
    scored = [v for v in known if (v["model"], v["prompt_version"]) in anchor_judged]
    if model or prompt_version:
        current = next(
            (
                v
                for v in reversed(scored)
                if (not model or v["model"] == model)
                and (not prompt_version or v["prompt_version"] == prompt_version)
            ),
            None,
        )
    else:
        current = scored[-1] if scored else None
    if current is None:
        return None
    cur = (current["model"], current["prompt_version"])
    others = [v for v in scored if (v["model"], v["prompt_version"]) != cur]
    base = next((v for v in reversed(others) if v["trusted"]), None) or (others[-1] if others else None)
    out: dict[str, Any] = {
        "version": {"model": cur[0], "prompt_version": cur[1]},
        "trusted": current["trusted"],
    }
    if base is None:
        out.update(
            baseline=None, drifted=None, note="no earlier version scored the anchors: nothing to compare"
        )
        return out
    b = (base["model"], base["prompt_version"])
    common = sorted(anchor_judged[cur].keys() & anchor_judged[b].keys())
    between = agreement([(anchor_judged[b][k], anchor_judged[cur][k]) for k in common])
    anchors = [(tid, m, item, label) for tid, m, item, label, anchor in humans if anchor]

    def accuracy(ver: tuple[str, str]) -> float | None:
        pairs = [
            (label, anchor_judged[ver][(t, m, i)])
            for t, m, i, label in anchors
            if (t, m, i) in anchor_judged[ver]
        ]
        accuracy: float | None = agreement(pairs)["accuracy"]
        return accuracy

    acc_cur, acc_base = accuracy(cur), accuracy(b)
    drop = (acc_base - acc_cur) if acc_cur is not None and acc_base is not None else None
    drifted = (between["accuracy"] is not None and between["accuracy"] < MIN_AGREEMENT) or (
        drop is not None and drop > MAX_ACCURACY_DROP
    )
    out.update(
        baseline={"model": b[0], "prompt_version": b[1], "trusted": base["trusted"]},
        items=len(common), agreement_between_versions=between, human_accuracy={"baseline": acc_base, "current": acc_cur},
        accuracy_drop=drop, drifted=drifted,
        thresholds={"min_agreement": MIN_AGREEMENT, "max_accuracy_drop": MAX_ACCURACY_DROP},
    )  # fmt: skip
    return out


def accept(write: WriteFn, model: str, prompt_version: str, report: dict[str, Any] | None) -> None:
    """Mark a judge version trusted, keeping the drift report it was accepted on."""
    now = datetime.now(UTC).replace(tzinfo=None)
    payload = orjson.dumps(report, default=str).decode() if report is not None else None

    write(lambda con: judging.trust(con, model, prompt_version, payload, now))
