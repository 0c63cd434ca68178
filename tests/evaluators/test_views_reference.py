"""The views a batch's fetched rows become, and the verdict rows written for them, are those of the
plain way of building them: every column through ``to_pylist``, every step and view through its
dataclass constructor, each metadata text parsed on its own, the details serialized row by row.
The batch is the bench's traces (English and Chinese, a quarter without document ids, some
documents sent without text)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa
import pytest

from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store.verdicts import TraceTables
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.references import References, _loads
from evaluators.service.registry import discover
from evaluators.service.running import Runner, build_tables, evaluate_tables
from evaluators.service.views import _pylist, fetch_tables, make_inputs, views_from_tables
from evaluators.trace_view import StepDoc, StepInfo, TraceView
from ragfault.local import LocalStore
from tests.evaluators.bench_traces import store_bench_traces

TRACES = 40
NOW = datetime(2026, 6, 1, 12, 0, 0)


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[TraceTables, References]:
    path = tmp_path_factory.mktemp("views") / "views.duckdb"
    local = LocalStore(str(path))
    try:
        store_bench_traces(local, seed=5, traces=TRACES, per_request=20, dataset="v")
        assert local.settle_all() == TRACES
        cur = local.store.cursor()
        ids = [r[0] for r in cur.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()]
        refs = References()
        refs.refresh(cur)
        return fetch_tables(cur, ids), refs
    finally:
        local.close()


def _plain_views(tables: TraceTables) -> list[TraceView]:
    t = [c.to_pylist() for c in tables.traces.columns]
    s = [c.to_pylist() for c in tables.steps.columns]
    d = [c.to_pylist() for c in tables.docs.columns]
    steps: dict[str, list[StepInfo]] = {tid: [] for tid in t[0]}
    for i, tid in enumerate(s[0]):
        leading = [col[i] for col in s[1:20]]
        steps[tid].append(StepInfo(*leading, citations=tuple(s[20][i] or ()), is_root=bool(s[21][i])))
    docs: dict[str, list[StepDoc]] = {tid: [] for tid in t[0]}
    for i, tid in enumerate(d[0]):
        raw = d[8][i]
        meta = _loads(raw) if raw is not None else None
        row = [col[i] for col in d[1:]]
        row[7] = meta if isinstance(meta, dict) else None
        docs[tid].append(StepDoc(*row))
    for trace_docs in docs.values():
        trace_docs.sort(key=lambda x: (x.span_id, x.stage, x.position is None, x.position or 0))
    # TraceView's fields in order; the fetched columns are in the same order, generation last
    return [
        TraceView(
            *row[:8],
            tuple(row[8]) if row[8] else None,
            *row[9:12],
            int(row[12] or 0),
            tuple(steps[row[0]]),
            tuple(docs[row[0]]),
        )  # fmt: skip
        for row in zip(*t, strict=True)
    ]


def _types(view: TraceView) -> list[Any]:
    return [type(v) for v in vars(view).values()] + [
        [type(getattr(s, f)) for f in vars(StepInfo)["__slots__"]] for s in view.steps
    ]


def test_views_are_the_plain_ones(batch: tuple[TraceTables, References]) -> None:
    tables, _ = batch
    views, gens = views_from_tables(tables)
    plain = _plain_views(tables)
    assert len(views) == TRACES
    assert views == plain
    assert [_types(v) for v in views] == [_types(v) for v in plain]  # datetimes, not look-alikes
    tids, generations = (c.to_pylist() for c in tables.traces.select(["trace_id", "generation"]).columns)
    assert gens == dict(zip(tids, generations, strict=True))
    assert {type(v.start_time) for v in views} == {datetime}
    assert any(d.metadata for v in views for d in v.documents)
    assert any(not d.doc_id for v in views for d in v.documents)  # traces without document ids


def test_rows_are_those_of_the_plain_views(batch: tuple[TraceTables, References]) -> None:
    tables, refs = batch
    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs), tier="cheap")
    out = evaluate_tables(runner, refs, tables, NOW, DEFAULT_SOURCE_KEYS)
    views, gens = views_from_tables(tables)
    plain = build_tables(runner, make_inputs(refs, _plain_views(tables), DEFAULT_SOURCE_KEYS), gens, NOW)
    for name in ("evals", "log", "ran", "done"):
        assert getattr(out, name).equals(getattr(plain, name)), name
    # the details column holds each metric's JSON text
    inputs = make_inputs(refs, views, DEFAULT_SOURCE_KEYS)
    details = [m.details for inp in inputs for _, m in runner.run(inp)]
    opt = orjson.OPT_NON_STR_KEYS
    assert out.evals.column("details").to_pylist() == [
        orjson.dumps(d, option=opt).decode() if d is not None else None for d in details
    ]
    assert out.evals.num_rows > 40 * TRACES


@pytest.mark.parametrize(
    "chunks", [[], [[]], [[datetime(2026, 3, 1, 2, 3, 4, 5), None]], [[None], [datetime(1, 1, 1)]]]
)
def test_timestamps_as_to_pylist_gives_them(chunks: list[list[datetime | None]]) -> None:
    column = pa.chunked_array([pa.array(c, pa.timestamp("us")) for c in chunks], pa.timestamp("us"))
    got = _pylist(column)
    assert got == column.to_pylist()
    assert {type(v) for v in got} <= {datetime, type(None)}


def test_a_timestamp_beyond_datetime_fails_as_to_pylist_does() -> None:
    column = pa.chunked_array([pa.array([2**62], pa.int64()).cast(pa.timestamp("us"))])
    with pytest.raises(OverflowError):
        column.to_pylist()
    with pytest.raises(OverflowError):
        _pylist(column)
