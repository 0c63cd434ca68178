"""A value the CLI puts into a URL is URL-encoded: ``ragfault load gold FILE --server`` names the
dataset after the file, and a file named ``g&dataset=evil#x.jsonl`` is that dataset, whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Server

ROOT = Path(__file__).resolve().parents[2]
CASE = {"case_id": "enc-1", "query": "How long is the refund window?", "answerable": True,
        "evidence": [{"doc_id": "policy", "quote": "30 days"}]}  # fmt: skip


def test_a_file_name_with_query_characters_is_the_dataset_whole(server: Server, tmp_path: Path) -> None:
    name = "g&dataset=evil#x.jsonl"
    gold = tmp_path / name
    gold.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "load", "gold", str(gold), "--server", server.url],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "loaded 1 cases" in out.stdout
    assert server.sql("SELECT case_id, dataset FROM gold_cases") == [["enc-1", name]]


def test_query_strings_are_url_encoded() -> None:
    from ragfault.client import _query

    assert _query({"dataset": "a&b=c#d e", "none": None}) == "?dataset=a%26b%3Dc%23d+e"
    assert _query(None) == "" and _query({"x": None}) == ""
