"""The bench's traces (``bench/evaluate.py``) stored for a test: English and Chinese, a quarter
without document ids, a gold case each and the registry; some documents as sent without their text
(settling takes the registry's by their id). Not settled."""

from __future__ import annotations

import json
import random
import time

from bench.evaluate import export_requests, make_kb
from collector.ingest.span_rows import flatten
from collector.normalize import DEFAULT_SOURCE_KEYS
from evaluators.service.loading import store_gold, store_kb
from ragfault.local import LocalStore


def store_bench_traces(local: LocalStore, seed: int, traces: int, per_request: int, dataset: str) -> None:
    rng = random.Random(seed)
    kb = make_kb(rng, 40)
    cases = []
    for req, req_cases in export_requests(rng, kb, traces, per_request, time.time_ns() - 3600 * 10**9):
        cases.extend(req_cases)
        local.store.write_spans(local.store.con, flatten(req, source_keys=DEFAULT_SOURCE_KEYS))
    public = [{k: v for k, v in d.items() if not k.startswith("_")} for d in kb]
    store_kb(local.write, "\n".join(json.dumps(d, ensure_ascii=False) for d in public))
    store_gold(local.write, "\n".join(json.dumps(c, ensure_ascii=False) for c in cases), dataset=dataset)
    local.store.con.execute(
        "UPDATE step_documents SET content = NULL WHERE stage = 'candidate' AND position % 3 = 0 "
        "AND doc_id IN (SELECT doc_id FROM kb_documents)"
    )
