"""ragfault serve: run the collector."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("serve", help="run the collector (OTLP/HTTP + API and OTLP/gRPC)")
    p.add_argument("--store", choices=["duckdb", "ducklake"], help="backend (default duckdb: one file, --db)")
    p.add_argument(
        "--db",
        help="DuckDB file, created when missing (default ./ragfault.duckdb); a file another process "
        "holds, or that is not a ragfault database, is refused",
    )
    p.add_argument("--catalog", help="DuckLake catalog, postgresql://USER@HOST:PORT/DB (--store ducklake)")
    p.add_argument("--data-path", help="directory of the lake's Parquet files (--store ducklake)")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--http-port", type=int, help="OTLP/HTTP and API port (default 4318)")
    p.add_argument("--grpc-port", type=int, help="OTLP/gRPC port (default 4317)")
    p.add_argument(
        "--settle-seconds", type=float, help="quiet time after which a trace is complete (default 3)"
    )
    p.add_argument("--config", help="TOML config file ([server], [store], [evaluation], [judge] tables)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.db and args.store != "ducklake":  # a wrong --db is refused before the engine is imported
        from ragfault.dbfile import SERVE_HELD, check_writable

        check_writable(args.db, held=SERVE_HELD)
    from ragfault.server import serve
    from ragfault.settings import load_settings

    tree = load_settings(
        args.config,
        {
            "store": args.store,
            "db": args.db,
            "catalog": args.catalog,
            "data_path": args.data_path,
            "host": args.host,
            "http_port": args.http_port,
            "grpc_port": args.grpc_port,
            "settle_seconds": args.settle_seconds,
        },
    )
    serve(tree)  # the whole tree: every component takes its table from it
    return 0
