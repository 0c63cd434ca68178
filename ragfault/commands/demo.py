"""ragfault demo: the whole loop on an embedded default — sample app -> collector -> evaluators ->
attribution report — offline, no model needed."""

from __future__ import annotations

import argparse

from ragfault import report


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("demo", help="run the sample helpdesk app through ragfault and print the attribution")
    p.add_argument(
        "--db", default="./ragfault-demo.duckdb", help="database file to create (replaced if present)"
    )
    p.add_argument("--format", "-f", choices=["text", "markdown", "json"], default="text")
    return p


def run(args: argparse.Namespace) -> int:
    from collector.store import Store
    from collector.store.reader import run_select
    from ragfault.demo.run import run_demo
    from ragfault.demo.scenarios import RUN_ID, SCENARIOS

    print("ragfault demo: starting a collector, loading the helpdesk knowledge base and gold set,")
    print(f"running {len(SCENARIOS)} requests through the instrumented sample app ...")
    result = run_demo(args.db)
    store = Store(result.db, read_only=True)
    try:

        def q(sql: str, params: dict) -> dict:
            return run_select(store.cursor(), sql, params, row_cap=100_000).as_dict()

        rep = report.build(q, run_id=None)
        print(report.render(rep, args.format))
        found = {r[0]: r[1] for r in q("SELECT case_id, root_cause FROM attribution", {})["rows"]}
    finally:
        store.con.close()
    expected = {s.case_id: s.expected for s in SCENARIOS if s.case_id}
    agree = sum(1 for c, e in expected.items() if found.get(c) == e)
    print(
        f"Planted failures found: {agree} of {len(expected)} cases attributed to the planted root cause "
        f"(run {RUN_ID}, {result.traces} traces in {result.seconds:.1f} s)."
    )
    for c, e in sorted(expected.items()):
        if found.get(c) != e:
            print(f"  {c}: planted {e}, attributed {found.get(c)}")
    print(f"\nThe database is {result.db}. Try:")
    print(f'  ragfault query --db {result.db} "SELECT case_id, root_cause, failing_layers FROM attribution"')
    print(f"  ragfault query --db {result.db} refusal_table")
    print(
        f'  ragfault query --db {result.db} "SELECT stage, doc_id, content FROM step_documents '
        "WHERE trace_id = (SELECT trace_id FROM attribution WHERE case_id = 'api-rate-limit')\""
    )
    print(f"  ragfault report --db {result.db} --format markdown")
    return 0 if agree == len(expected) else 1
