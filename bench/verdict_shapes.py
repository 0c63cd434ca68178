"""What a compact shape of the verdicts would save and cost, measured on a store in use.

A trace's cheap-tier verdicts are about sixty rows of ``evaluations``. Half of them are the IR metrics
at k (``recall@k``, ``hit@k``, ``precision@k``, ``ndcg@k`` for every configured k, per retrieval span
and per trace), which share every column but the metric's own. The folded shape keeps one row per
(trace, span, evaluator, generation) for those, the metrics at k in a list of structs, and the other
verdicts as they are; ``evaluations`` becomes a view that unnests the list, so users' SQL is unchanged.

This prints, for a copy of ``store`` (the file itself is only read):

- **bytes**: each column's bytes a trace (``storage.column_bytes``) of ``evaluations`` as the server
  wrote it, of the same rows written again in one pass (row groups of the store's size, in the
  order they were evaluated), and of the folded table written the same way;
- **write**: DuckDB's CPU a trace to insert the verdicts of ``--batches`` batches of ``--batch``
  traces (Arrow, one transaction a batch, as ``write_verdicts`` does) into a fresh file in each
  shape (row groups of the store's size), and of the checkpoints (after the last batch, or after
  every N batches for each N of ``--checkpoint-every``), and the bytes a trace written; the folding
  itself (Python building the lists) is not counted;
- then run ``bench/query_times.py`` on the store and the folded copy it leaves beside it
  (``<stem>-folded.duckdb``) for what it costs the bundled queries and a user's reads of a trace.

    .venv/bin/python bench/verdict_shapes.py /tmp/prefill/prefill-100000-kb400-seed7-this.duckdb \\
        --checkpoint-every 0,16,4

(``sustain.py --rates 400 --per-request 128 --prefill 100000 --prefill-dir /tmp/prefill`` builds that
store, about 7 minutes.)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.storage import column_bytes  # noqa: E402
from collector.store.file.connect import ROW_GROUP_ROWS  # noqa: E402

COLUMNS = (
    "trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, metric, value, numerator, "
    "denominator, status, reason, passed, label, details, generation, evaluated_at"
)
AT_K = "metric LIKE '%@%'"  # recall@k, hit@k, precision@k, ndcg@k
GROUP = "trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, generation, evaluated_at"

ROWS_DDL = """
CREATE TABLE {name} (
    trace_id VARCHAR NOT NULL, span_id VARCHAR, case_id VARCHAR, run_id VARCHAR, evaluator VARCHAR NOT NULL,
    evaluator_version VARCHAR NOT NULL, tier VARCHAR NOT NULL, metric VARCHAR NOT NULL, value DOUBLE,
    numerator DOUBLE, denominator DOUBLE, status VARCHAR NOT NULL, reason VARCHAR, passed BOOLEAN,
    label VARCHAR, details JSON USING COMPRESSION zstd, generation INTEGER NOT NULL,
    evaluated_at TIMESTAMP NOT NULL{extra}
)
"""
AT_K_TYPE = (
    "STRUCT(metric VARCHAR, value DOUBLE, numerator DOUBLE, denominator DOUBLE, status VARCHAR, "
    "reason VARCHAR, passed BOOLEAN, label VARCHAR, details JSON)[]"
)
# the rows of `evaluations`, folded: the metrics at k of one (trace, span, evaluator, generation) in
# one row (metric '@k', its own value columns NULL), in the order the verdicts were written
FOLD = f"""
SELECT * FROM (
    SELECT {COLUMNS}, NULL::{AT_K_TYPE} AS at_k, rowid AS r FROM {{src}} WHERE NOT ({AT_K})
    UNION ALL
    SELECT trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, '@k', NULL, NULL, NULL,
           'ok', NULL, NULL, NULL, NULL, generation, evaluated_at,
           list({{'metric': metric, 'value': value, 'numerator': numerator, 'denominator': denominator,
                  'status': status, 'reason': reason, 'passed': passed, 'label': label,
                  'details': details}} ORDER BY rowid),
           min(rowid)
    FROM {{src}} WHERE {AT_K} GROUP BY {GROUP}
) ORDER BY r
"""
VIEW = f"""
CREATE VIEW evaluations AS
SELECT {COLUMNS} FROM verdict_rows WHERE at_k IS NULL
UNION ALL
SELECT trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, k.metric, k.value, k.numerator,
       k.denominator, k.status, k.reason, k.passed, k.label, k.details, generation, evaluated_at
FROM (SELECT *, unnest(at_k) AS k FROM verdict_rows WHERE at_k IS NOT NULL)
"""


def fold(src: str) -> str:
    """``FOLD`` over the rows of ``src`` (a table of ``evaluations``' columns)."""
    return FOLD.replace("{src}", src)


def per_trace(sizes: dict[str, int], traces: int) -> dict[str, float]:
    return {c: b / traces for c, b in sorted(sizes.items(), key=lambda kv: -kv[1])}


def block_size(con: duckdb.DuckDBPyConnection, catalog: str) -> int:
    rows = con.execute(
        "SELECT block_size FROM pragma_database_size() WHERE database_name = $c", {"c": catalog}
    )
    return int(rows.fetchall()[0][0])


def sizes(store: Path, work: Path) -> tuple[int, dict[str, dict[str, float]]]:
    """Bytes a trace of each column: as stored, rewritten in one pass, folded in one pass."""
    out: dict[str, dict[str, float]] = {}
    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")
    con.execute(f"ATTACH '{store}' AS src (READ_ONLY)")
    traces = int(con.execute("SELECT count(DISTINCT trace_id) FROM src.evaluations").fetchall()[0][0])
    con.execute("USE src")
    out["as stored"] = per_trace(
        column_bytes(con, ["evaluations"], block_size(con, "src"))["evaluations"], traces
    )
    for shape in ("rows", "folded"):
        path = work / f"shape-{shape}.duckdb"
        path.unlink(missing_ok=True)
        con.execute(f"ATTACH '{path}' AS {shape} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        started = time.monotonic()
        if shape == "rows":
            con.execute(ROWS_DDL.format(name=f"{shape}.evaluations", extra=""))
            con.execute(
                f"INSERT INTO {shape}.evaluations SELECT {COLUMNS} FROM src.evaluations ORDER BY rowid"
            )
            table = "evaluations"
        else:
            con.execute(ROWS_DDL.format(name=f"{shape}.verdict_rows", extra=f", at_k {AT_K_TYPE}"))
            con.execute(
                f"INSERT INTO {shape}.verdict_rows SELECT * EXCLUDE (r) FROM ({fold('src.evaluations')})"
            )
            table = "verdict_rows"
        con.execute(f"CHECKPOINT {shape}")
        con.execute(f"USE {shape}")
        out[shape] = per_trace(column_bytes(con, [table], block_size(con, shape))[table], traces)
        con.execute("USE src")
        print(f"{shape}: written in {time.monotonic() - started:.0f} s")
        con.execute(f"DETACH {shape}")
        path.unlink()
    con.close()
    return traces, out


def verdict_batches(store: Path, batch: int, batches: int) -> dict[str, list[pa.Table]]:
    """The verdicts of ``batches`` batches of ``batch`` stored traces (the first evaluated), as
    Arrow tables in each shape, in the order they were written."""
    src = duckdb.connect(str(store), read_only=True)
    ids = [
        r[0]
        for r in src.execute(
            "SELECT trace_id FROM traces WHERE eval_generation > 0 ORDER BY first_received_at LIMIT $n",
            {"n": batch * batches},
        ).fetchall()
    ]
    tables: dict[str, list[pa.Table]] = {"rows": [], "folded": []}
    for i in range(batches):
        src.register("_ids", pa.table({"trace_id": ids[i * batch : (i + 1) * batch]}))
        src.execute(
            "CREATE OR REPLACE TEMP TABLE b AS SELECT * FROM evaluations "
            "WHERE trace_id IN (SELECT trace_id FROM _ids) ORDER BY rowid"
        )
        tables["rows"].append(src.sql(f"SELECT {COLUMNS} FROM b").to_arrow_table())
        tables["folded"].append(src.sql(f"SELECT * EXCLUDE (r) FROM ({fold('b')})").to_arrow_table())
        src.unregister("_ids")
    src.close()
    return tables


def write_cost(
    tables: dict[str, list[pa.Table]], traces: int, work: Path, checkpoint_every: int = 0
) -> dict[str, dict[str, float]]:
    """DuckDB's CPU µs a trace to insert the batches of ``verdict_batches`` (``traces`` traces in
    all) in each shape and to checkpoint them (after every ``checkpoint_every`` batches, and after
    the last), and the bytes a trace written."""
    out: dict[str, dict[str, float]] = {}
    for shape, parts in tables.items():
        path = work / f"write-{shape}.duckdb"
        path.unlink(missing_ok=True)
        con = duckdb.connect(":memory:")
        con.execute(f"ATTACH '{path}' AS w (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")  # the store's row groups
        con.execute("USE w")
        con.execute("SET checkpoint_threshold = '100GB'")
        extra = f", at_k {AT_K_TYPE}" if shape == "folded" else ""
        con.execute(ROWS_DDL.format(name="t", extra=extra))
        con.execute("CHECKPOINT w")
        inserts = checkpoint = 0.0
        for i, part in enumerate(parts, 1):
            cpu = time.process_time()
            con.register("_evals", part)
            con.execute("BEGIN")
            con.execute("INSERT INTO t SELECT * FROM _evals")
            con.execute("COMMIT")
            con.unregister("_evals")
            inserts += time.process_time() - cpu
            if i == len(parts) or (checkpoint_every and i % checkpoint_every == 0):
                cpu = time.process_time()
                con.execute("CHECKPOINT w")
                checkpoint += time.process_time() - cpu
        stored = sum(column_bytes(con, ["t"], block_size(con, "w"))["t"].values())
        con.close()
        path.unlink()
        rows = sum(p.num_rows for p in parts)
        out[shape] = {
            "rows a trace": rows / traces,
            "insert µs a trace": inserts / traces * 1e6,
            "checkpoint µs a trace": checkpoint / traces * 1e6,
            "bytes a trace": stored / traces,
        }
    return out


def folded_copy(store: Path) -> Path:
    """A copy of ``store`` whose ``evaluations`` is the view over the folded table."""
    target = store.with_name(f"{store.stem}-folded.duckdb")
    if target.exists():
        return target
    partial = target.with_suffix(".partial")
    shutil.copyfile(store, partial)
    con = duckdb.connect(str(partial))
    con.execute("SET enable_progress_bar = false")
    con.execute(ROWS_DDL.format(name="verdict_rows", extra=f", at_k {AT_K_TYPE}"))
    con.execute(f"INSERT INTO verdict_rows SELECT * EXCLUDE (r) FROM ({fold('evaluations')})")
    con.execute("DROP TABLE evaluations")
    con.execute(VIEW)
    con.execute("CHECKPOINT")
    con.close()
    partial.rename(target)
    return target


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("store", type=Path, help="a ragfault DuckDB file with evaluated traces (only read)")
    p.add_argument(
        "--work", type=Path, default=None, help="where the shapes are written (default: beside the store)"
    )
    p.add_argument("--batch", type=int, default=128, help="traces a write transaction")
    p.add_argument("--batches", type=int, default=64)
    p.add_argument(
        "--checkpoint-every",
        default="0",
        help="comma-separated: checkpoint after every N batches (0: once, after the last); one write each",
    )
    p.add_argument("--skip-copy", action="store_true", help="do not make the folded copy for query_times.py")
    args = p.parse_args()
    work = args.work or args.store.parent
    traces, shapes = sizes(args.store, work)
    columns = list(shapes["as stored"]) + [c for c in shapes["folded"] if c not in shapes["as stored"]]
    print(f"\nbytes a trace of the verdicts ({traces:,} traces)\n")
    print("| column | as stored | rewritten | folded |")
    print("|---|---|---|---|")
    for c in columns:
        print(
            f"| {c} | "
            + " | ".join(f"{shapes[s].get(c, 0):,.0f}" for s in ("as stored", "rows", "folded"))
            + " |"
        )
    print(
        "| total | "
        + " | ".join(f"**{sum(shapes[s].values()):,.0f}**" for s in ("as stored", "rows", "folded"))
        + " |"
    )
    print(f"\nwriting {args.batches} batches of {args.batch} traces (DuckDB's CPU, the bytes written)\n")
    print("| shape | checkpoint | rows a trace | insert µs a trace | checkpoint µs a trace | bytes a trace |")
    print("|---|---|---|---|---|---|")
    batches = verdict_batches(args.store, args.batch, args.batches)
    for every in (int(x) for x in args.checkpoint_every.split(",")):
        costs = write_cost(batches, args.batch * args.batches, work, every)
        when = f"every {every} batches" if every else "at the end"
        for shape, c in costs.items():
            print(
                f"| {shape} | {when} | {c['rows a trace']:.1f} | {c['insert µs a trace']:,.0f} "
                f"| {c['checkpoint µs a trace']:,.0f} | {c['bytes a trace']:,.0f} |"
            )
    if not args.skip_copy:
        copy = folded_copy(args.store)
        print(f"\nfolded copy: {copy} — time it beside the store:")
        print(f"  .venv/bin/python bench/query_times.py {args.store} {copy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
