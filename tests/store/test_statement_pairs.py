"""The statements the file and the lake each have their own of, side by side: the file updates its
rows in place, the lake appends rows that its views read (``collector.store.lake.work``), so the two cannot be one
statement; what decides which rows they touch is the same, and this test holds it so.

Each pair names the conditions both must contain (compared without table names or aliases and
whitespace): changing one side's without the other fails here."""

from __future__ import annotations

import re

import pytest

from collector.store.sqlfiles import all_statements
from collector.store.verdicts import EVAL_COLUMNS

WAITING = "settled_at IS NOT NULL AND assembled_spans IS NOT NULL AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)"
SETTLED_OF = "trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL"
TEXTLESS = ("source = 'span'", "(content IS NULL OR content = '')", "k.content <> ''")
BY_ID = "k.doc_id = coalesce(doc_id, chunk_id)"

# file statement, lake statement, the conditions both hold
PAIRS: list[tuple[str, str, tuple[str, ...]]] = [
    ("verdicts/pending", "lake/work/pending", (WAITING, "ORDER BY settled_at", "LIMIT $n")),
    ("verdicts/requeue", "lake/work/requeue", (SETTLED_OF,)),
    (
        "feedback/requeue_evaluated",
        "lake/work/requeue_evaluated",
        (f"{SETTLED_OF} AND evaluated_spans IS NOT NULL",),
    ),
    ("references/reassemble", "lake/work/reassemble", (SETTLED_OF,)),
    ("settle/registry_text", "lake/work/registry_texts", (*TEXTLESS, BY_ID)),
    (
        "references/refill_textless",
        "lake/work/textless_traces",
        (*TEXTLESS, BY_ID, "k.doc_id IN (SELECT doc_id FROM _kb)", "IN (SELECT trace_id FROM"),
    ),
    (
        "verdicts/mark_evaluated",
        "lake/work/mark_evaluated",
        (
            "coalesce(eval_generation, 0) + 1",
            "$now",
            "CASE WHEN $judged THEN evaluated_spans ELSE assembled_spans END",
        ),
    ),
    ("verdicts/evaluated_spans", "lake/work/evaluated_spans", ("_sdone",)),
    ("verdicts/insert_verdicts", "lake/work/insert_verdicts", ("SELECT * FROM _evals",)),
]

# the names a statement's rows go by: the file's tables, the lake's views and state, their aliases
_QUALIFIER = re.compile(r"\b(?:step_documents|span_documents|traces|trace_state|steps|d|s)\.")


def normal(text: str) -> str:
    """A statement's body (no header) or a condition, compared without qualifiers, case or spacing."""
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("--"))
    body = _QUALIFIER.sub("", body)
    return re.sub(r"\s+", " ", body.replace("( ", "(").replace(" )", ")")).strip().lower()


@pytest.mark.parametrize(("file", "lake", "shared"), PAIRS, ids=[p[1] for p in PAIRS])
def test_the_file_and_the_lake_statement_share_their_conditions(
    file: str, lake: str, shared: tuple[str, ...]
) -> None:
    statements = all_statements()
    for key in (file, lake):
        body = normal(statements[key].sql)
        missing = [c for c in shared if normal(c) not in body]
        assert not missing, f"{key} no longer holds {missing} (its pair: {file if key == lake else lake})"


def test_both_verdict_inserts_take_the_columns_a_batch_writes() -> None:
    for key in ("verdicts/insert_verdicts", "lake/work/insert_verdicts"):
        listed = re.search(r"INSERT INTO \w+ \(([^)]*)\)", all_statements()[key].sql)
        assert listed is not None, key
        assert tuple(c.strip() for c in listed.group(1).split(",")) == EVAL_COLUMNS, key


def test_a_changed_condition_is_caught() -> None:
    """The comparison sees a change of one side (here the waiting condition of the lake's pending)."""
    lake = all_statements()["lake/work/pending"].sql.replace("evaluated_spans <> assembled_spans", "true")
    assert normal(WAITING) in normal(all_statements()["verdicts/pending"].sql)
    assert normal(WAITING) not in normal(lake)
