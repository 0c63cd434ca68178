"""ragfault report: the attribution breakdown and layered metrics of a run, dataset or time range."""

from __future__ import annotations

import argparse

from ragfault.client import DB_HELP, SERVER_HELP, add_lake_arguments, lake_of, sql


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("report", help="print the attribution report")
    p.add_argument("--run", dest="run_id", help="only this run id")
    p.add_argument("--dataset", help="only cases loaded from this dataset (file name)")
    p.add_argument("--since", help="only traces starting at or after (ISO time, UTC)")
    p.add_argument("--until", help="only traces starting before (ISO time, UTC)")
    p.add_argument(
        "--format", "-f", choices=["text", "markdown", "json"], default="text", help="report format"
    )
    p.add_argument("--config", help="TOML config file ([experiments] table: reliance by category)")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    add_lake_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ragfault import report

    def q(text: str, params: dict) -> dict:
        return sql(text, params, db=args.db, server=args.server, row_cap=100_000, lake=lake_of(args))

    from ragfault.experiments.config import load_experiment_settings

    strong = load_experiment_settings(args.config).strong_categories
    report.check_filters(q, run_id=args.run_id, dataset=args.dataset)
    rep = report.build(
        q,
        run_id=args.run_id,
        dataset=args.dataset,
        since=args.since,
        until=args.until,
        strong_categories=strong,
    )
    print(report.render(rep, args.format), end="")
    return 0
