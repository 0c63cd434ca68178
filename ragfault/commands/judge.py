"""ragfault judge calibrate: the judge's agreement with human labels and its bias, per judge version,
and the drift of a new version on the anchor set (``--rescore`` first judges the anchors with the
configured judge; ``--accept`` trusts the version after the report)."""

from __future__ import annotations

import argparse
import json
import urllib.request
from typing import Any
from urllib.parse import urlencode

from ragfault.client import DB_HELP, SERVER_HELP, _headers, post, require_database, target


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("judge", help="LLM judge calibration")
    p.add_argument(
        "action",
        choices=["calibrate"],
        help="calibrate: the judge's agreement with human labels and its drift",
    )
    p.add_argument("--model", help="only this judge model")
    p.add_argument("--prompt-version", help="only this prompt version")
    p.add_argument(
        "--rescore", action="store_true", help="re-score the anchor set with the configured judge first"
    )
    p.add_argument(
        "--accept", action="store_true", help="trust the reported version after printing its drift"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--config", help="TOML config file ([judge] table), for --rescore without a server")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--server", help=SERVER_HELP)
    return p


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def render(report: dict[str, Any]) -> str:
    lines = [f"human labels: {report['human_labels']}"]
    for v in report["versions"]:
        o = v["overall"]
        lines.append(
            f"\njudge {v['model']} @ prompt {v['prompt_version']}: n={o['n']} accuracy={_fmt(o['accuracy'])} "
            f"kappa={_fmt(o['kappa'])} (labels without a judge verdict: {v['unmatched_labels']})"
        )
        for metric, a in v["metrics"].items():
            lines.append(f"  {metric}: n={a['n']} accuracy={_fmt(a['accuracy'])} kappa={_fmt(a['kappa'])}")
            for label, c in a["labels"].items():
                row = a["confusion"].get(label, {})
                conf = ", ".join(f"{j}:{n}" for j, n in row.items()) or "-"
                lines.append(
                    f"    {label:<14} human={c['human']:<4} judge={c['judge']:<4} bias={c['bias']:+.3f}"
                    f"   human→judge {conf}"
                )
    d = report.get("drift")
    if d:
        lines.append(
            f"\ndrift of {d['version']['model']} @ {d['version']['prompt_version']} "
            f"(trusted: {d['trusted']}):"
        )
        if d.get("baseline") is None:
            lines.append(f"  {d['note']}")
        else:
            b, a = d["baseline"], d["agreement_between_versions"]
            lines.append(
                f"  baseline {b['model']} @ {b['prompt_version']} on {d['items']} anchor items: "
                f"agreement {_fmt(a['accuracy'])}, kappa {_fmt(a['kappa'])}"
            )
            h = d["human_accuracy"]
            lines.append(f"  accuracy vs humans: baseline {_fmt(h['baseline'])}, new {_fmt(h['current'])}")
            lines.append(
                "  DRIFTED: check the judge before trusting its scores" if d["drifted"] else "  no drift"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    url, db = target(args.server, args.db)
    if url is not None:
        if args.rescore:
            post(url, "/api/v1/judge/anchors/rescore", b"{}")
        q = urlencode(
            {k: v for k, v in {"model": args.model, "prompt_version": args.prompt_version}.items() if v}
        )
        req = urllib.request.Request(f"{url}/api/v1/judge/calibration?{q}", headers=_headers(None))
        with urllib.request.urlopen(req, timeout=120) as resp:
            report = json.loads(resp.read())
        if args.accept and report.get("drift"):
            v = report["drift"]["version"]
            post(url, "/api/v1/judge/accept", json.dumps(v).encode())
    else:
        report = _local(args, db)
    print(json.dumps(report, indent=2, default=str, ensure_ascii=False) if args.json else render(report))
    if args.accept and report.get("drift"):
        v = report["drift"]["version"]
        print(f"\ntrusted {v['model']} @ {v['prompt_version']}")
    return 0


def _local(args: argparse.Namespace, db: str) -> dict[str, Any]:
    require_database(db)  # before the engine is imported: a mistyped name is refused at once
    from evaluators.judge.calibration import accept, calibration_report
    from ragfault.local import LocalStore

    local = LocalStore(db)
    try:
        if args.rescore:
            from evaluators.judge.service import build_judge_runner
            from evaluators.judge.settings import load_judge_settings
            from evaluators.service.config import load_evaluation_settings
            from ragfault_core.errors import ConfigError

            settings = load_judge_settings(args.config)
            runner = (
                build_judge_runner(local, settings, evaluation=load_evaluation_settings(args.config))
                if settings is not None
                else None
            )
            if runner is None:
                raise ConfigError("--rescore needs a [judge] table (pass --config)")
            try:
                n = runner.rescore_anchors()
            finally:
                runner.close()
            print(f"re-scored {n} anchor traces with {settings.version if settings else 'the judge'}")
        con = local.store.cursor()
        report = calibration_report(con, args.model, args.prompt_version)
        con.close()
        if args.accept and report.get("drift"):
            v = report["drift"]["version"]
            accept(local.write, v["model"], v["prompt_version"], report["drift"])
        return report
    finally:
        local.close()
