"""ragfault gate --rules FILE: release gates per slice; exits 1 with the reasons when one fails."""

from __future__ import annotations

import argparse
from typing import Any

from ragfault.client import DB_HELP, SERVER_HELP, add_lake_arguments, lake_of, sql
from ragfault.output import table


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("gate", help="check release gates; exit non-zero when one fails")
    p.add_argument("--rules", required=True, help="TOML rules file")
    p.add_argument("--run", dest="run_id", help="run under test (overrides the rules file)")
    p.add_argument("--baseline", help="baseline run for regressions (overrides the rules file)")
    p.add_argument("--config", help="TOML config file ([experiments] table: reliance by category)")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    add_lake_arguments(p)
    return p


def _rows(args: argparse.Namespace, run_id: str | None) -> list[dict[str, Any]]:
    from queries import load_query

    q = load_query("case_results")
    res = sql(
        q.sql,
        q.bind({"run_id": run_id}),
        db=args.db,
        server=args.server,
        row_cap=1_000_000,
        lake=lake_of(args),
    )
    return [dict(zip(res["columns"], r, strict=True)) for r in res["rows"]]


def _experiment_rows(
    args: argparse.Namespace, run_id: str | None, needed: set[str]
) -> dict[str, list[dict[str, Any]]]:
    from ragfault.experiments import experiment_rows
    from ragfault.experiments.config import load_experiment_settings

    def q(text: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(text, params, db=args.db, server=args.server, row_cap=1_000_000, lake=lake_of(args))

    return experiment_rows(q, run_id, needed, load_experiment_settings(args.config).strong_categories)


def run(args: argparse.Namespace) -> int:
    from ragfault.gate import EXPERIMENT, load_rules, measure

    rules = load_rules(args.rules)
    run_id = args.run_id or rules.run
    baseline_id = args.baseline or rules.baseline
    rows = _rows(args, run_id)
    baseline = _rows(args, baseline_id) if baseline_id else None
    extra = _experiment_rows(
        args, run_id, {EXPERIMENT[r.metric] for r in rules.rule if r.metric in EXPERIMENT}
    )
    outcomes = [
        measure(r, rows, baseline, extra, resamples=rules.resamples, seed=rules.seed) for r in rules.rule
    ]
    out = []
    for o in outcomes:
        value = "n/a" if o.value is None else f"{o.value:.4g}"
        m = o.rule.metric
        counts_only = m.startswith(("layer:", "root_cause:")) or m in (
            "traces",
            "regressions",
            "retrieval_hurt",
            "affected_not_rerun",
        )
        count = (
            ""
            if o.denominator in (None, 1.0) and counts_only
            else (f"{o.numerator:g}/{o.denominator:g}" if o.denominator is not None else "")
        )
        out.append(["PASS" if o.passed else "FAIL", o.rule.title, value, count, o.cases, o.detail])
    print(f"run: {run_id or '(all)'}" + (f"   baseline: {baseline_id}" if baseline_id else ""))
    print(table(["result", "rule", "value", "num/den", "cases", "detail"], out, max_width=70))
    failed = [o for o in outcomes if not o.passed]
    if failed:
        print(f"\n{len(failed)} of {len(outcomes)} gates failed:")
        for o in failed:
            print(
                f"  - {o.rule.title}: {o.detail or ('value ' + ('n/a' if o.value is None else f'{o.value:.4g}'))}"
            )
        return 1
    print(f"\nall {len(outcomes)} gates passed")
    return 0
