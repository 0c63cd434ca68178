"""ragfault export: write traces (and every per-trace table) to Parquet partitioned by day.

With a server running, the server writes the files (the path is on its machine); otherwise the
database file is opened directly (read-write only with --delete-after).
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from ragfault.client import (
    DB_HELP,
    HELD,
    SERVER_HELP,
    open_hint,
    open_read_only,
    post,
    require_database,
    target,
)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("export", help="export traces to Parquet (partitioned by day)")
    p.add_argument(
        "out_dir", help="output directory (one sub-directory per table, day=YYYY-MM-DD partitions)"
    )
    p.add_argument("--service", help="only traces of this service.name")
    p.add_argument("--since", type=datetime.fromisoformat, help="traces starting at or after (ISO time, UTC)")
    p.add_argument("--until", type=datetime.fromisoformat, help="traces starting before (ISO time, UTC)")
    p.add_argument("--older-than-days", type=float, help="only traces that started longer ago")
    p.add_argument("--retention", action="store_true", help="the traces the [retention] policy would delete")
    p.add_argument("--delete-after", action="store_true", help="delete the exported traces afterwards")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--config", help="TOML config file ([retention] table) when no server runs")
    p.add_argument("--server", help=SERVER_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    from collector.maintenance.retention import ExportRequest, load_retention_settings, run_export

    out_dir = str(Path(args.out_dir).resolve())
    req = ExportRequest(
        out_dir=out_dir, service=args.service, since=args.since, until=args.until,
        older_than_days=args.older_than_days, retention=args.retention, delete_after=args.delete_after,
    )  # fmt: skip
    url, db = target(args.server, args.db)
    if url is not None:
        result = post(url, "/api/v1/export", req.model_dump_json().encode(), timeout=3600)
    else:
        if args.delete_after:  # it writes: the same checks as every command that writes
            from collector.store import Store
            from ragfault.dbfile import check_writable
            from ragfault_core.errors import ConfigError

            require_database(db)
            check_writable(db, held=HELD)
            try:
                store = Store(db)
            except ConfigError as exc:
                raise open_hint(exc, db) from exc
        else:
            store = open_read_only(db)
        try:
            settings = load_retention_settings(args.config)
            result = run_export(store.cursor(), lambda fn: fn(store.con), req, settings)
        finally:
            store.close() if args.delete_after else store.con.close()
    print(json.dumps(result, indent=2))
    return 0
