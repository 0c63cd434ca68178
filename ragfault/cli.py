"""The ``ragfault`` command. Each subcommand is a module in ``ragfault.commands`` with
``add_parser(subparsers)`` and ``run(args) -> int``; adding one is one module and one line below."""

from __future__ import annotations

import argparse
import importlib
import sys

from ragfault_core.errors import ConfigError, RagfaultError

COMMANDS = [
    "serve",
    "query",
    "demo",
    "load",
    "evaluate",
    "report",
    "gate",
    "export",
    "label",
    "judge",
    "compare",
    "kb",
    "affected",
    "doctor",
    "gold",
]


class _HelpFormatter(argparse.HelpFormatter):
    """Each option's help ends with its default, unless it has none or says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            action.option_strings
            and default not in (None, False, argparse.SUPPRESS, [])
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


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
        p.set_defaults(_run=module.run, _parser=p)
        p.formatter_class = _HelpFormatter
        if not p.description:  # the one-line help of the command list, on its own page too
            p.description = next((a.help for a in sub._choices_actions if a.dest == name), None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # a mistyped option: the usage of the subcommand it was given to, not the command list
        owner: argparse.ArgumentParser = getattr(args, "_parser", None) or parser
        owner.error(f"unrecognized arguments: {' '.join(extra)}")
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
    except OSError as exc:  # a file that is missing, unreadable or cannot be written: one line
        where = f": {exc.filename}" if exc.filename else ""
        print(f"ragfault: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:
        from collector.store.base import is_file_error

        if is_file_error(exc):
            print(f"ragfault: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 1
        raise
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
