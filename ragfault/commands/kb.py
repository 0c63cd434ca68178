"""ragfault kb conflicts: conflict samples — stale copies of evidence documents with key numbers
changed, to test whether the system follows a superseded version."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ragfault_core.errors import ConfigError, PermanentError

if TYPE_CHECKING:
    from evaluators.gold import GoldCase, KBDocument


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("kb", help="knowledge-base tools (conflict samples)")
    kb = p.add_subparsers(
        dest="kb_command",
        metavar="KB_COMMAND",
        required=True,
        help="conflicts: write a KB with stale copies of evidence documents",
    )
    c = kb.add_parser("conflicts", help="write a KB with stale copies of evidence documents, and a manifest")
    c.add_argument("--kb", required=True, help="knowledge base (JSONL)")
    c.add_argument("--gold", required=True, help="gold cases (JSONL)")
    c.add_argument("--out", required=True, help="directory for kb.jsonl, gold.jsonl and manifest.jsonl")
    c.add_argument("--cases", type=int, help="at most this many cases (policy cases first; default all)")
    c.add_argument("--seed", type=int, default=0, help="seed of the case order and the changed values")
    c.set_defaults(_parser=c)  # a mistyped option prints this usage, not that of `kb`
    return p


def _read(path: str, model: type[KBDocument] | type[GoldCase], key: str) -> list:  # type: ignore[type-arg]
    from evaluators.gold import parse_jsonl

    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        return parse_jsonl(text, model, key)
    except PermanentError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _write(path: Path, rows: list[dict]) -> None:  # type: ignore[type-arg]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def _refuse_overwrite(out: Path, inputs: list[str]) -> None:
    """Refuse an --out directory where writing would replace an input file, or files that an
    earlier ``kb conflicts`` did not write (it leaves a manifest.jsonl beside them)."""
    sources = {Path(i).resolve() for i in inputs}
    names = ("kb.jsonl", "gold.jsonl", "manifest.jsonl")
    for name in names:
        if (out / name).resolve() in sources:
            raise ConfigError(
                f"--out {out} would replace the input {out / name}: pass another --out directory"
            )
    if not (out / "manifest.jsonl").is_file():
        found = [str(out / n) for n in names if (out / n).exists()]
        if found:
            raise ConfigError(
                f"--out {out} holds {', '.join(found)}, not written by `kb conflicts`: pass another --out directory"
            )


def run(args: argparse.Namespace) -> int:
    from evaluators.gold import GoldCase, KBDocument
    from ragfault.experiments import conflicts

    if args.cases is not None and args.cases < 1:
        raise ConfigError("--cases must be at least 1")
    _refuse_overwrite(Path(args.out), [args.kb, args.gold])
    kb = _read(args.kb, KBDocument, "doc_id")
    gold = _read(args.gold, GoldCase, "case_id")
    new_kb, cases, planted = conflicts.plant(kb, gold, cases=args.cases, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "kb.jsonl", [d.model_dump(mode="json", exclude_none=True) for d in new_kb])
    _write(out / "gold.jsonl", [c.model_dump(mode="json", exclude_none=True) for c in cases])
    _write(out / "manifest.jsonl", [p.manifest_row() for p in planted])
    print(f"{len(planted)} stale copies planted for {len(cases)} cases; wrote {out / 'kb.jsonl'} "
          f"({len(new_kb)} documents), {out / 'gold.jsonl'} and {out / 'manifest.jsonl'}")  # fmt: skip
    for p in planted:
        values = ", ".join(f"{c} -> {s}" for c, s in p.values)
        print(f"  {p.stale_doc_id} (superseded by {p.doc_id}; cases {', '.join(p.case_ids)}): {values}")
    return 0
