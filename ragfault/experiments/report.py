"""The report's experiment sections: the closed-book baseline, conflict samples and documents
changed since the latest verdicts. Each appears only when its data exists."""

from __future__ import annotations

from typing import Any

from ragfault.compare import QueryFn


def sections(
    run: QueryFn, run_id: str | None, strong_categories: str | None = None
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, sec in (
        ("closed_book", closed_book_section(run, run_id, strong_categories)),
        ("conflicts", conflicts_section(run, run_id)),
        ("kb_changes", kb_changes_section(run, run_id)),
    ):
        if sec is not None:
            out[key] = sec
    return out


def closed_book_section(
    run: QueryFn, run_id: str | None, strong_categories: str | None = None
) -> dict[str, Any] | None:
    """The no-retrieval baseline of each run that has a closed-book twin."""
    from ragfault.experiments import closed_book

    twins = closed_book.summary(closed_book.pairs(run, run_id, strong_categories=strong_categories))["twins"]
    if not twins:
        return None
    cols = ["run_id", "closed_run", "helped", "hurt", "parametric", "neither", "unknown", "parametric_share",
            "flagged (strong reliance, parametric)"]  # fmt: skip
    rows = [[t["run_id"], t["closed_run"], *(t[o] for o in closed_book.OUTCOMES), t["parametric_share"],
             ", ".join(t["flagged"])] for t in twins]  # fmt: skip
    return {
        "title": "Closed-book baseline",
        "note": "Each case against the run's twin answered without retrieval: helped = right only with "
        "retrieval, hurt = right only without, parametric = right both ways; parametric_share = parametric "
        "/ pairs with a known outcome.",
        "columns": cols,
        "rows": rows,
    }


def conflicts_section(run: QueryFn, run_id: str | None) -> dict[str, Any] | None:
    """Per run: how often stale versions were retrieved, kept out, reached the context, were followed."""
    from ragfault.experiments import conflicts

    runs = conflicts.summary(conflicts.case_rows(run, run_id))["runs"]
    if not runs:
        return None
    cols = ["run_id", "cases", "stale_retrieved", "kept_out", "stale_in_context", "followed",
            "follows_stale_rate", "followed by"]  # fmt: skip
    rows = [[r["run_id"], r["cases"], r["stale_retrieved"], r["kept_out"], r["stale_in_context"], r["followed"],
             r["follows_stale_rate"], ", ".join(r["followed_cases"])] for r in runs]  # fmt: skip
    return {
        "title": "Stale versions (conflict samples)",
        "note": "Cases with a stale version of a document: retrieved, kept out of the context, reached it; "
        "follows_stale_rate = answers stating a value only the stale version holds / cases it reached.",
        "columns": cols,
        "rows": rows,
    }


def kb_changes_section(run: QueryFn, run_id: str | None) -> dict[str, Any] | None:
    """Cases whose latest verdict predates a change to a document they depend on."""
    from ragfault.experiments import affected

    rows = [r for r in affected.case_rows(run, run_id) if not r["rerun"]]
    if not rows:
        return None
    cols = ["case_id", "run_id", "doc_id", "change", "changed_at", "why", "trace_id"]
    return {
        "title": "Documents changed since the latest verdicts",
        "note": "Re-run these cases: a document their evidence names or their latest trace retrieved changed "
        "after that trace was evaluated.",
        "columns": cols,
        "rows": [[r[c] for c in cols] for r in rows],
    }
