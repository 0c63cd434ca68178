"""ragfault demo: the whole loop on an embedded default — sample app -> collector -> evaluators ->
attribution report — offline, no model needed."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("demo", help="run the sample helpdesk app through ragfault and print the attribution")
    p.add_argument(
        "--db",
        default="./ragfault-demo.duckdb",
        help="database file to create; an existing file is refused, except an earlier demo's with --force",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the --db file when an earlier demo made it and it holds nothing else "
        "(never another file, nor one a running server holds)",
    )
    p.add_argument(
        "--format", "-f", choices=["text", "markdown", "json"], default="text", help="report format"
    )
    p.add_argument(
        "--experiments",
        action="store_true",
        help="then run the experiments: a second run compared with the first, its closed-book "
        "twin, conflict samples and a changed document",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from ragfault.dbfile import prepare_demo_file

    prepare_demo_file(args.db, force=args.force)  # refused before the engine is imported or anything printed
    from collector.store import Store
    from collector.store.reader import run_select
    from collector.store.report import case_causes
    from ragfault import report
    from ragfault.demo.run import run_demo
    from ragfault.demo.scenarios import RUN_ID, SCENARIOS

    print("ragfault demo: starting a collector, loading the helpdesk knowledge base and gold set,")
    print(f"running {len(SCENARIOS)} requests through the instrumented sample app ...")
    result = run_demo(args.db, keep_server=args.experiments, force=args.force)
    planted: dict = {}
    if result.server is not None:
        from ragfault.demo.experiments import run_experiments

        try:
            planted = run_experiments(f"http://127.0.0.1:{result.server.http_port}", result.traces)
        finally:
            result.server.stop()
    store = Store(result.db, read_only=True)
    try:

        def q(sql: str, params: dict) -> dict:
            return run_select(store.cursor(), sql, params, row_cap=100_000).as_dict()

        rep = report.build(q, run_id=RUN_ID if args.experiments else None)
        print(report.render(rep, args.format))
        if args.experiments:
            from ragfault.demo.experiments import print_experiments

            print_experiments(q, planted.get("since"), "markdown" if args.format == "markdown" else "text")
        found = case_causes(q, RUN_ID)
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
    print("\nOpen the results in the web UI (dashboard, traces, SQL):")
    print(f"  ragfault serve --db {result.db}    # then open http://127.0.0.1:4318/ui")
    return 0 if agree == len(expected) else 1
