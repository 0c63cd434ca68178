#!/usr/bin/env python
"""The same app traffic gives the same stored rows and the same answers at two revisions of the code.

A restructuring (modules moved, the store's handle retyped, components rewired) must change nothing a
user reads. This script checks that end to end: it runs the demo (a real server, the real exporter,
the helpdesk app, every evaluator) once with each revision's code, each into its own database, and
compares what users read there: every bundled query, the ``attribution`` and ``live_attribution``
views, ``SELECT attributes FROM spans``, the steps, the step documents and the verdicts. Columns that
record when something happened on this machine (receipt and evaluation times, durations measured by
the app, ids made from them) are left out; every other value must be equal.

Each revision runs in its own checkout (``git worktree``) and its own virtual environment that reuses
the installed dependencies of the one running this script (a ``.pth`` file) and installs only the
project, editable, so its entry points (evaluators, components) are that revision's.

    .venv/bin/python bench/same_across.py --base 0eb49fd [--head HEAD | --head .] [--keep DIR]

``--head .`` (the default) is the working tree as it is. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import venv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from queries import all_queries  # noqa: E402

RUN = "demo-v1"
# columns that say when or how fast, on this machine: never equal from one run to the next
_TIMES = (
    "received_at", "first_received_at", "last_received_at", "settled_at", "evaluated_at", "created_at",
    "start_time", "end_time", "duration_ms", "latency_ms", "updated_at", "at", "ts", "time_unix_nano",
    "start_time_unix_nano", "end_time_unix_nano", "observed_time_unix_nano", "decided_at",
)  # fmt: skip


def _readings() -> dict[str, str]:
    """Name -> statement of everything compared: every bundled query (the demo's run where one is
    asked for, the other parameters at their defaults), views and tables."""
    out: dict[str, str] = {}
    for name in sorted(all_queries()):
        out[f"query {name}"] = name
    for view in ("attribution", "live_attribution"):
        out[f"view {view}"] = f"SELECT * FROM {view}"
    out["spans attributes"] = "SELECT trace_id, span_id, name, attributes, events, links FROM spans"
    out["steps"] = "SELECT * FROM steps"
    out["step_documents"] = "SELECT * FROM step_documents"
    # a latency the app measured differs from run to run: its rows are compared without their values
    out["evaluations"] = "SELECT * FROM evaluations WHERE metric <> 'latency_ms'"
    out["evaluations latency rows"] = (
        "SELECT trace_id, span_id, status FROM evaluations WHERE metric = 'latency_ms'"
    )
    return out


def labels(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Trace and span ids are random: each is named by its place instead, a trace by the order the
    app sent them in (its first span's start), a span by its place in its trace (start, name)."""
    spans = con.execute(
        "SELECT trace_id, span_id, name, start_time_unix_nano FROM spans ORDER BY start_time_unix_nano, name"
    ).fetchall()
    names: dict[str, str] = {}
    count: dict[str, int] = {}
    for trace_id, span_id, _name, _start in spans:
        if trace_id not in names:
            names[trace_id] = f"trace#{len(names)}"
            count[trace_id] = 0
        names[span_id] = f"{names[trace_id]}/span#{count[trace_id]}"
        count[trace_id] += 1
    return names


_ID = re.compile(r"\b[0-9a-f]{16}(?:[0-9a-f]{16})?\b")
# inside texts: a time to the microsecond (when a check ran: ``as_of``) and a random UUID (the demo's
# session ids; the documents' ids are name-based UUIDs, kept)
_NOW = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}\.\d+")
_RANDOM_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b")


def _sorted_json(value: Any) -> Any:
    """A JSON object held as text, with its keys sorted (the order a reader filled a mapping in is
    no part of what it says)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(value), sort_keys=True)
        except ValueError:
            return value
    return value


# rows that differ from run to run by design: the judge tier samples traces by a hash of their id,
# and the ids are random, so which traces it sampled is not comparable (its other rows are)
_RANDOM: dict[str, Callable[[tuple[Any, ...]], bool]] = {
    "query why_no_score": lambda row: row[1] == "judge",
}


def _canonical(row: list[Any], names: dict[str, str]) -> str:
    text = json.dumps([_sorted_json(v) for v in row], default=str)
    text = _ID.sub(lambda m: names.get(m.group(0), m.group(0)), text)
    return _RANDOM_UUID.sub("<uuid4>", _NOW.sub("<now>", text))


def read(db: Path) -> dict[str, list[str]]:
    """Each reading's rows as canonical JSON text, without the time columns, ids named by their
    place (``labels``), sorted."""
    queries = all_queries()
    con = duckdb.connect(str(db), read_only=True)
    out: dict[str, list[str]] = {}
    try:
        names = labels(con)
        for name, what in _readings().items():
            if what in queries:
                q = queries[what]
                given = {p: RUN for p in q.params if p in ("run_id", "base_run", "new_run")}
                cur = con.execute(q.sql, q.bind(given))
            else:
                cur = con.execute(what)
            cols = [d[0] for d in cur.description]
            keep = [i for i, c in enumerate(cols) if c not in _TIMES and not c.endswith("_ms")]
            drop = _RANDOM.get(name, lambda row: False)
            rows = [_canonical([r[i] for i in keep], names) for r in cur.fetchall() if not drop(r)]
            out[name] = sorted(rows)
    finally:
        con.close()
    return out


def _side(rev: str, work: Path) -> tuple[Path, Path]:
    """(checkout, python) of a revision: ``.`` is this checkout with this interpreter's venv made
    anew too (so its entry points are the working tree's)."""
    checkout = ROOT if rev == "." else work / f"tree-{rev.replace('/', '_')}"
    if rev != "." and not checkout.exists():  # (a kept one is reused)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), rev], check=True
        )
    env_dir = work / f"venv-{rev.replace('/', '_').replace('.', 'here')}"
    python = env_dir / "bin" / "python"
    if python.exists() and rev != ".":  # a kept revision's; the working tree's is installed again
        return checkout, python
    venv.EnvBuilder(with_pip=False).create(env_dir)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)}))
    # the dependencies of this interpreter's environment, after the revision's own install
    (site / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-build-isolation", "-e", str(checkout)],
        check=True,
    )  # fmt: skip
    return checkout, python


def run_demo(checkout: Path, python: Path, db: Path) -> None:
    code = "import sys; from pathlib import Path; from ragfault.demo.run import run_demo; run_demo(Path(sys.argv[1]))"
    subprocess.run([str(python), "-c", code, str(db)], cwd=checkout, check=True, stdout=subprocess.DEVNULL)


def compare(a: dict[str, list[str]], b: dict[str, list[str]]) -> dict[str, str]:
    """Reading name -> how it differs (row counts, and the first row only one side has)."""
    diffs = {}
    for name in a:
        x, y = a[name], b.get(name, [])
        if x != y:
            only_a = sorted(set(x) - set(y))[:1]
            only_b = sorted(set(y) - set(x))[:1]
            diffs[name] = f"{len(x)} rows vs {len(y)}; first only in base {only_a}, only in head {only_b}"
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="revision to compare with (a commit, a branch)")
    ap.add_argument("--head", default=".", help="the other revision; '.' is the working tree")
    ap.add_argument("--keep", type=Path, help="keep the checkouts, venvs and databases here")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="same-across-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        outs = []
        for rev in (args.base, args.head):
            checkout, python = _side(rev, work)
            db = work / f"demo-{rev.replace('/', '_').replace('.', 'here')}.duckdb"
            db.unlink(missing_ok=True)
            run_demo(checkout, python, db)
            outs.append(read(db))
        diffs = compare(outs[0], outs[1])
        for name in outs[0]:
            print(f"{name:40} {len(outs[0][name]):6} rows  {'DIFFERENT' if name in diffs else 'same'}")
        for name, how in diffs.items():
            print(f"DIFFERENT {name}: {how[:2000]}")
        print(
            f"{len(outs[0]) - len(diffs)} of {len(outs[0])} readings equal between {args.base} and {args.head}"
        )
        return 1 if diffs else 0
    finally:
        if not args.keep:
            for tree in work.glob("tree-*"):
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
                )
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
