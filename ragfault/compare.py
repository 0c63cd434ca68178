"""``ragfault compare``: what a change did, run against baseline run, with its uncertainty.

Every metric of the report, overall and per gold-case category: both runs' values with their
denominators, the paired difference over the cases both runs answered and its 95 % interval from a
paired bootstrap over cases; per case, which passed in one run and failed in the other and McNemar's
exact p-value. Runs marked as repeats of one configuration (``ragfault.run_group``) add the mean and
spread of each metric over the repeats and each case's flip rate.

Inputs are rows of the bundled ``case_results`` query (latest trace per case and run), read through
a ``QueryFn`` as the report does, so a comparison is what ``ragfault query case_results`` shows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from collector.store.views import view_statement
from queries import load_query
from ragfault import stats
from ragfault_core.errors import PermanentError

QueryFn = Callable[[str, dict[str, Any]], dict[str, Any]]

# Metrics in report order, beside ``recall@k`` (every k the evaluator stored).
MACRO = ("candidate_recall", "context_recall", "context_retention", "fact_coverage", "citation_validity")
RATES = ("answer_accuracy", "over_refusal_rate", "correct_refusal_rate")
DELTA_METRICS = ("ok_rate", *MACRO, "answer_support", *RATES)


def rows_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(zip(result["columns"], r, strict=True)) for r in result["rows"]]


def case_rows(run: QueryFn, run_id: str) -> list[dict[str, Any]]:
    q = load_query("case_results")
    return rows_of(run(q.sql, q.bind({"run_id": run_id})))


def latest_per_case(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (str(r.get("start_time") or ""), r["trace_id"])):
        out[r["case_id"]] = r
    return out


def _recall_at(row: dict[str, Any]) -> dict[str, float]:
    at = row.get("recall_at")
    if isinstance(at, str):
        at = json.loads(at)
    return {k: float(v) for k, v in (at or {}).items() if v is not None}


def answerability(row: dict[str, Any]) -> str | None:
    cell = row.get("answerability")
    return str(cell) if cell else None


def contributions(row: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """What one case's result adds to each metric: (numerator, denominator); absent = not applicable.

    The same definitions as the report and the gates: macro metrics add (value, 1), answer support
    adds (supported claims, claims), the refusal rates add (0 or 1, 1) to their own denominator
    (answerable cases; unanswerable ones for the correct-refusal rate)."""
    out: dict[str, tuple[float, float]] = {"ok_rate": (1.0 if row["root_cause"] == "ok" else 0.0, 1.0)}
    for k, v in _recall_at(row).items():
        out[k] = (v, 1.0)
    for m in MACRO:
        value = row.get(m)
        if value is not None:
            out[m] = (float(value), 1.0)
    claims = row.get("answer_support_den")
    if claims:
        out["answer_support"] = (float(row.get("answer_support_num") or 0), float(claims))
    cell = answerability(row)
    if cell:
        if cell.endswith("_unanswerable"):
            out["correct_refusal_rate"] = (1.0 if cell == "refused_unanswerable" else 0.0, 1.0)
        elif cell.endswith("_answerable"):
            out["over_refusal_rate"] = (1.0 if cell == "refused_answerable" else 0.0, 1.0)
            right = cell == "answered_answerable" and row.get("fact_coverage") == 1
            out["answer_accuracy"] = (1.0 if right else 0.0, 1.0)
    return out


def metric_order(names: Iterable[str]) -> list[str]:
    names = set(names)
    at = sorted((n for n in names if n.startswith("recall@")), key=lambda n: int(n.split("@")[1]))
    rest = [m for m in DELTA_METRICS if m in names]
    return [rest[0], *at, *rest[1:]] if rest and rest[0] == "ok_rate" else [*at, *rest]


@dataclass(frozen=True)
class Side:
    """One run's per-case contributions."""

    rows: dict[str, dict[str, Any]]  # case_id -> latest case_results row
    values: dict[str, dict[str, tuple[float, float]]]  # case_id -> metric -> (num, den)

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> Side:
        latest = latest_per_case(rows)
        return cls(latest, {c: contributions(r) for c, r in latest.items()})

    def category(self, case_id: str) -> str:
        return str(self.rows[case_id].get("category") or "(none)")


def _value(values: Iterable[tuple[float, float]]) -> tuple[float | None, float, float, int]:
    num = den = 0.0
    n = 0
    for a, b in values:
        num += a
        den += b
        n += 1
    return stats.ratio(num, den), num, den, n


def metric_row(
    metric: str,
    category: str | None,
    base: Side,
    new: Side,
    cases: set[str] | None,
    *,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """One metric over one slice (``cases``: the slice's case ids; None = every case)."""

    def pick(side: Side) -> dict[str, tuple[float, float]]:
        return {c: v[metric] for c, v in side.values.items() if metric in v and (cases is None or c in cases)}

    b, r = pick(base), pick(new)
    bv, bn, bd, bc = _value(b.values())
    rv, rn, rd, rc = _value(r.values())
    paired = sorted(set(b) & set(r))
    pairs = [(b[c][0], b[c][1], r[c][0], r[c][1]) for c in paired]
    delta = stats.paired_delta(pairs)
    ci = stats.bootstrap_ci(pairs, resamples=resamples, seed=seed) if delta is not None else None
    return {
        "metric": metric, "category": category,
        "baseline": bv, "run": rv, "n": len(paired), "delta": delta,
        "ci_low": ci.low if ci else None, "ci_high": ci.high if ci else None,
        "baseline_numerator": bn, "baseline_denominator": bd, "baseline_cases": bc,
        "run_numerator": rn, "run_denominator": rd, "run_cases": rc,
        "significant": bool(ci and (ci.low > 0 or ci.high < 0)),
    }  # fmt: skip


def case_changes(base: Side, new: Side, cases: set[str] | None = None) -> dict[str, Any]:
    """Per-case pass/fail (root cause ``ok`` or not) in both runs, and McNemar's exact test."""
    paired = sorted(c for c in set(base.rows) & set(new.rows) if cases is None or c in cases)
    regressed = [
        c for c in paired if base.rows[c]["root_cause"] == "ok" and new.rows[c]["root_cause"] != "ok"
    ]
    improved = [c for c in paired if base.rows[c]["root_cause"] != "ok" and new.rows[c]["root_cause"] == "ok"]
    return {
        "paired": len(paired),
        "regressed": regressed,
        "improved": improved,
        "mcnemar_p": stats.mcnemar_exact(len(regressed), len(improved)) if paired else None,
        "only_baseline": sorted(c for c in base.rows if c not in new.rows and (cases is None or c in cases)),
        "only_run": sorted(c for c in new.rows if c not in base.rows and (cases is None or c in cases)),
        "changes": [
            {"case_id": c, "baseline_root_cause": base.rows[c]["root_cause"], "run_root_cause": new.rows[c]["root_cause"],
             "baseline_trace_id": base.rows[c]["trace_id"], "run_trace_id": new.rows[c]["trace_id"]}
            for c in sorted(regressed + improved)
        ],
    }  # fmt: skip


def compare_rows(
    base_rows: list[dict[str, Any]],
    run_rows: list[dict[str, Any]],
    *,
    baseline: str,
    run: str,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    base, new = Side.of(base_rows), Side.of(run_rows)
    names = metric_order({m for side in (base, new) for v in side.values.values() for m in v})
    slices: dict[str, set[str]] = {}
    for side in (base, new):
        for c in side.rows:
            slices.setdefault(side.category(c), set()).add(c)
    metrics = [metric_row(m, None, base, new, None, resamples=resamples, seed=seed) for m in names]
    for cat in sorted(slices):
        metrics += [metric_row(m, cat, base, new, slices[cat], resamples=resamples, seed=seed) for m in names]
    return {
        "baseline": baseline,
        "run": run,
        "resamples": resamples,
        "seed": seed,
        "level": 0.95,
        "metrics": metrics,
        "cases": case_changes(base, new),
    }


# --- repeats ---------------------------------------------------------------------------------------


def run_marks(run: QueryFn) -> dict[str, dict[str, Any]]:
    q = load_query("run_marks")
    return {r["run_id"]: r for r in rows_of(run(view_statement("run_marks"), q.bind({})))}


def repeats(group: str, per_run: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Mean and spread of every metric over the repeats of one configuration, and each case's flip
    rate: the share of pairs of repeats that disagree on whether the case passed (0 = stable; 1 =
    every pair disagrees, which two repeats can do at most)."""
    sides = {r: Side.of(rows) for r, rows in sorted(per_run.items())}
    names = metric_order({m for s in sides.values() for v in s.values.values() for m in v})
    metrics = []
    for m in names:
        vals = [
            v
            for v in (_value(c[m] for c in s.values.values() if m in c)[0] for s in sides.values())
            if v is not None
        ]
        mean, sd = stats.mean_sd(vals)
        metrics.append({"metric": m, "runs": len(vals), "mean": mean, "sd": sd,
                        "min": min(vals) if vals else None, "max": max(vals) if vals else None})  # fmt: skip
    flips = []
    for c in sorted({c for s in sides.values() for c in s.rows}):
        outcomes = [s.rows[c]["root_cause"] == "ok" for s in sides.values() if c in s.rows]
        k, p = len(outcomes), sum(outcomes)
        pairs = k * (k - 1) // 2
        flips.append({"case_id": c, "runs": k, "passed": p,
                      "flip_rate": (p * (k - p)) / pairs if pairs else None})  # fmt: skip
    flips.sort(key=lambda f: (-(f["flip_rate"] or 0), f["case_id"]))
    return {"group": group, "runs": list(sides), "metrics": metrics, "cases": flips}


def build(
    run: QueryFn, *, run_id: str, baseline: str, resamples: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """The comparison of ``run_id`` against ``baseline``, with a ``repeats`` entry for each of the
    two that belongs to a group of repeats."""
    base_rows, run_rows = case_rows(run, baseline), case_rows(run, run_id)
    for name, rows in ((baseline, base_rows), (run_id, run_rows)):
        if not rows:
            raise PermanentError(f"run {name!r} has no evaluated trace with a gold case")
    out = compare_rows(base_rows, run_rows, baseline=baseline, run=run_id, resamples=resamples, seed=seed)
    marks = run_marks(run)
    groups: list[str] = []
    for r in (baseline, run_id):
        g = (marks.get(r) or {}).get("run_group")
        if g and g not in groups:
            groups.append(g)
    out["repeats"] = []
    for g in groups:
        members = sorted(r for r, m in marks.items() if m.get("run_group") == g)
        out["repeats"].append(repeats(g, {r: case_rows(run, r) for r in members}))
    return out


# --- rendering -------------------------------------------------------------------------------------


def _num(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _signed(v: float | None) -> str:
    return "n/a" if v is None else f"{v:+.3f}"


def render(cmp: dict[str, Any], fmt: str = "text") -> str:
    from ragfault.output import table

    if fmt == "json":
        import orjson

        return orjson.dumps(cmp, option=orjson.OPT_INDENT_2).decode() + "\n"
    md = fmt == "markdown"
    cols = ["metric", "category", "baseline", "run", "paired n", "delta", "95% CI", ""]
    rows = []
    for m in cmp["metrics"]:
        rows.append([
            m["metric"], m["category"] or "(all)",
            f"{_num(m['baseline'])} ({m['baseline_numerator']:g}/{m['baseline_denominator']:g})",
            f"{_num(m['run'])} ({m['run_numerator']:g}/{m['run_denominator']:g})",
            m["n"], _signed(m["delta"]),
            "n/a" if m["ci_low"] is None else f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]",
            "*" if m["significant"] else "",
        ])  # fmt: skip
    c = cmp["cases"]
    p = "n/a" if c["mcnemar_p"] is None else f"{c['mcnemar_p']:.4g}"
    head = f"{cmp['run']} against baseline {cmp['baseline']}"
    note = (f"Paired bootstrap over cases ({cmp['resamples']} resamples, seed {cmp['seed']}); "
            "* the 95% interval excludes zero.")  # fmt: skip
    cases = (f"{c['paired']} cases in both runs: {len(c['regressed'])} regressed, {len(c['improved'])} improved "
             f"(pass = root cause ok); McNemar exact p = {p}")  # fmt: skip
    parts: list[str] = []
    if md:
        parts += [f"# {head}", "", note, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        parts += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
        parts += ["", "## Cases", "", cases, ""]
        parts += [
            f"- {ch['case_id']}: {ch['baseline_root_cause']} -> {ch['run_root_cause']}" for ch in c["changes"]
        ]
    else:
        parts += [f"== {head} ==  ({note})", table(cols, rows), "", f"== Cases ==  ({cases})"]
        if c["changes"]:
            parts.append(table(["case_id", "baseline", "run"],
                               [[ch["case_id"], ch["baseline_root_cause"], ch["run_root_cause"]] for ch in c["changes"]]))  # fmt: skip
    for rep in cmp.get("repeats", []):
        title = f"Repeats of {rep['group']} ({len(rep['runs'])} runs: {', '.join(rep['runs'])})"
        mrows = [[m["metric"], m["runs"], _num(m["mean"]), _num(m["sd"]), _num(m["min"]), _num(m["max"])]
                 for m in rep["metrics"]]  # fmt: skip
        frows = [
            [f["case_id"], f["runs"], f["passed"], _num(f["flip_rate"], 2)]
            for f in rep["cases"]
            if f["flip_rate"]
        ]
        if md:
            parts += [
                "",
                f"## {title}",
                "",
                "| metric | runs | mean | sd | min | max |",
                "|---|---|---|---|---|---|",
            ]
            parts += ["| " + " | ".join(str(v) for v in r) + " |" for r in mrows]
            parts += ["", "Cases that flip (share of pairs of repeats that disagree):", ""]
            parts += [f"- {r[0]}: passed {r[2]} of {r[1]}, flip rate {r[3]}" for r in frows] or ["_(none)_"]
        else:
            parts += ["", f"== {title} ==", table(["metric", "runs", "mean", "sd", "min", "max"], mrows), ""]
            parts.append("cases that flip (share of pairs of repeats that disagree):")
            parts.append(table(["case_id", "runs", "passed", "flip rate"], frows) if frows else "(none)")
    return "\n".join(parts).rstrip() + "\n"
