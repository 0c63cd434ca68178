"""The ``ragfault`` command. Each subcommand is a module in ``ragfault.commands`` with
``add_parser(subparsers)`` and ``run(args) -> int``; adding one is one module and one line below."""

from __future__ import annotations

import argparse
import importlib
import sys

from collector.errors import ConfigError, RagfaultError

COMMANDS = ["serve", "query", "demo", "load", "evaluate", "report", "gate", "export", "label", "judge"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragfault", description="Attribute RAG and agent failures from traces."
    )
    parser.add_argument("--version", action="version", version="ragfault 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"ragfault.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ragfault.commands.{name}":
                continue
            raise
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except ConfigError as exc:
        print(f"ragfault: {exc}", file=sys.stderr)
        return 2
    except RagfaultError as exc:
        print(f"ragfault: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
