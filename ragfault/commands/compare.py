"""ragfault compare --run B --baseline A: every report metric of two runs, the paired difference and
its bootstrap interval, per-case regressions with McNemar's exact p-value, and repeats' spread."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ragfault.client import DB_HELP, SERVER_HELP, sql

if TYPE_CHECKING:
    from ragfault import compare


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="compare a run with a baseline run, with confidence intervals")
    p.add_argument("--run", dest="run_id", required=True, help="the run under test")
    p.add_argument("--baseline", required=True, help="the run it is compared with")
    p.add_argument(
        "--format", "-f", choices=["text", "markdown", "json"], default="text", help="output format"
    )
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def query_fn(args: argparse.Namespace) -> compare.QueryFn:
    def q(text: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(text, params, db=args.db, server=args.server, row_cap=1_000_000)

    return q


def run(args: argparse.Namespace) -> int:
    if args.resamples < 0:
        raise SystemExit("ragfault: --resamples must be >= 0")
    from ragfault import compare

    cmp = compare.build(query_fn(args), run_id=args.run_id, baseline=args.baseline,
                        resamples=args.resamples, seed=args.seed)  # fmt: skip
    print(compare.render(cmp, args.format), end="")
    return 0
