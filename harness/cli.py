"""The `tokensieve` command line. Each subcommand lives in its own module of
`harness.commands` and exposes `register(subparsers)`, which adds its parser (with the
shared options of `harness.commands.options`) and sets `func(args) -> int`.

Failures end in one line on stderr and an exit code: 2 for bad input (argparse's own
errors included), 1 for a failing environment (a full disk), 130 for Ctrl-C; never a
traceback for anything tokensieve expects.
"""

from __future__ import annotations

import importlib
import sys

from harness.commands.options import Parser
from harness.errors import TokensieveError

# in --help in this order
COMMANDS = (
    "bench",
    "report",
    "export",
    "compare",
    "diff",
    "jumpforward",
    "logits",
    "findings",
    "gate",
    "check",
    "corpora",
    "engines",
    "vocab",
)


def build_parser() -> Parser:
    parser = Parser(
        prog="tokensieve",
        description="Benchmark and cross-check constrained-decoding engines on real vocabularies.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"harness.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a bad argument already reported on one line
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except TokensieveError as exc:
        print(f"tokensieve {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"tokensieve {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the environment's: a full disk, a read-only directory
        where = f": {exc.filename}" if exc.filename else ""
        print(f"tokensieve {args.command}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
