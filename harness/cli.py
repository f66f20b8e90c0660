"""The `tokensieve` command line. Each subcommand lives in `harness.commands.<name>` and
exposes `register(subparsers)`, which adds its parser and sets `func(args) -> int`."""

from __future__ import annotations

import argparse
import importlib
import sys

from harness.errors import TokensieveError

COMMANDS = ("engines", "vocab", "corpora", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokensieve",
        description="Benchmark and cross-check constrained-decoding engines on real vocabularies.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
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
