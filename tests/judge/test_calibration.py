"""Calibration on a hand-computable fixture, through the CLI on a real DuckDB file.

Ten claim labels, human vs judge v1:
    human  S S S S S U U U C C
    judge  S S S S U S U U C U
agree 7/10 -> accuracy 0.7. Human counts S5 U3 C2, judge S5 U4 C1:
p_e = (5*5 + 3*4 + 2*1) / 100 = 0.39, kappa = (0.7 - 0.39) / (1 - 0.39) = 0.31 / 0.61.
Bias (judge - human) / n: S 0, U +0.1, C -0.1.
Judge v2 re-scores the anchors and flips claims 1 and 2 to U: agreement with v1 8/10 = 0.8 (< 0.9),
accuracy vs humans 5/10 (a drop of 0.2): drifted.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from collector.store import Store
from ragfault.cli import main
from ragfault_core.textnorm import normalize
from tests.conftest import free_port

HUMAN = ["S", "S", "S", "S", "S", "U", "U", "U", "C", "C"]
JUDGE_V1 = ["S", "S", "S", "S", "U", "S", "U", "U", "C", "U"]
JUDGE_V2 = ["U", "U", "S", "S", "U", "S", "U", "U", "C", "U"]
NAMES = {"S": "supported", "U": "unsupported", "C": "contradicted"}


def fixture_db(tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "cal.duckdb")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "\n".join(
            json.dumps(
                {
                    "trace_id": "t1",
                    "metric": "judge_answer_support",
                    "claim": f"Claim number {i}.",
                    "label": NAMES[h],
                    "annotator": "ana",
                    "anchor": True,
                }
            )
            for i, h in enumerate(HUMAN)
        )
        + "\n"
    )
    store = Store(db)
    t0 = datetime(2026, 1, 1)
    for version, verdicts in (("v1", JUDGE_V1), ("v2", JUDGE_V2)):
        store.con.executemany(
            "INSERT INTO judge_verdicts VALUES ('t1', NULL, 'judge_answer_support', ?, ?, ?, NULL, 'judge-m', ?, "
            "'anchor', ?)",
            [
                (f"Claim number {i}.", normalize(f"Claim number {i}."), NAMES[j], version, t0)
                for i, j in enumerate(verdicts)
            ],
        )
        store.con.execute(
            "INSERT INTO judge_versions (model, prompt_version, first_seen, trusted) VALUES "
            "('judge-m', ?, ?, ?)",
            [version, t0.replace(day=1 if version == "v1" else 2), version == "v1"],
        )
    store.close()
    return db, str(labels)


def test_calibration_numbers_and_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, labels = fixture_db(tmp_path)
    nowhere = f"http://127.0.0.1:{free_port()}"
    assert main(["label", "import", labels, "--db", db, "--server", nowhere]) == 0
    assert "loaded 10 labels" in capsys.readouterr().out

    assert main(["judge", "calibrate", "--db", db, "--server", nowhere, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_version = {v["prompt_version"]: v for v in report["versions"]}
    v1 = by_version["v1"]["metrics"]["judge_answer_support"]
    assert v1["n"] == 10
    assert v1["accuracy"] == pytest.approx(0.7)
    assert v1["kappa"] == pytest.approx(0.31 / 0.61)
    assert v1["confusion"] == {
        "supported": {"supported": 4, "unsupported": 1},
        "unsupported": {"supported": 1, "unsupported": 2},
        "contradicted": {"contradicted": 1, "unsupported": 1},
    }
    assert {k: c["bias"] for k, c in v1["labels"].items()} == pytest.approx(
        {"supported": 0.0, "unsupported": 0.1, "contradicted": -0.1}
    )
    assert by_version["v2"]["overall"]["accuracy"] == pytest.approx(0.5)

    d = report["drift"]
    assert d["version"] == {"model": "judge-m", "prompt_version": "v2"}
    assert d["baseline"]["prompt_version"] == "v1" and d["baseline"]["trusted"] is True
    assert d["items"] == 10
    assert d["agreement_between_versions"]["accuracy"] == pytest.approx(0.8)
    assert d["human_accuracy"] == pytest.approx({"baseline": 0.7, "current": 0.5})
    assert d["drifted"] is True and d["trusted"] is False

    # the text report says the same numbers; --accept then trusts v2
    assert main(["judge", "calibrate", "--db", db, "--server", nowhere, "--accept"]) == 0
    out = capsys.readouterr().out
    assert "accuracy=0.700 kappa=0.508" in out and "DRIFTED" in out and "trusted judge-m @ v2" in out
    store = Store(db, read_only=True)
    assert store.con.execute("SELECT trusted FROM judge_versions WHERE prompt_version = 'v2'").fetchall() == [
        (True,)
    ]
    store.con.close()


def test_cohen_kappa_edge_cases() -> None:
    from evaluators.judge.calibration import agreement

    assert agreement([])["accuracy"] is None
    same = agreement([("a", "a"), ("a", "a")])  # one label on both sides: p_e = 1, kappa undefined
    assert same["accuracy"] == 1.0 and same["kappa"] is None
    opposite = agreement([("a", "b"), ("b", "a")])  # p_o 0, p_e 0.5 -> kappa -1
    assert opposite["kappa"] == pytest.approx(-1.0)
