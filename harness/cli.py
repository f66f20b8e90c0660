"""The `tokensieve` command line. Each subcommand lives in its own module of
`harness.commands` and exposes `register(subparsers)`, which adds its parser and sets
`func(args) -> int`; modules are discovered, so a new command is one new file."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import harness.commands
from harness.errors import TokensieveError

# listed first in --help, in this order; any other command module follows by name
FIRST = ("bench", "report", "compare", "diff", "corpora", "engines", "vocab")


def command_names() -> list[str]:
    found = {m.name for m in pkgutil.iter_modules(harness.commands.__path__)}
    return [n for n in FIRST if n in found] + sorted(found - set(FIRST))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokensieve",
        description="Benchmark and cross-check constrained-decoding engines on real vocabularies.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in command_names():
        importlib.import_module(f"harness.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TokensieveError as exc:
        print(f"tokensieve: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
