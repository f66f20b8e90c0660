"""`tokensieve compare RUN_A RUN_B`: what got faster or slower from A to B, beyond noise
(`harness.report.compare` does the work)."""

from __future__ import annotations

import argparse

from harness.commands import options as opt
from harness.report import compare as compare_module
from harness.report.compare import compare
from harness.store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="print what got faster or slower between two runs, beyond noise",
        description=compare_module.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_a", metavar="RUN_A", type=opt.run_name)
    parser.add_argument("run_b", metavar="RUN_B", type=opt.run_name)
    parser.add_argument(
        "--threshold",
        type=ratio,
        default=1.25,
        metavar="T",
        help="smallest ratio counted as a change (default 1.25)",
    )
    parser.add_argument(
        "--floor-us",
        type=opt.non_negative,
        default=100.0,
        metavar="US",
        help="smallest absolute difference of a single-shot metric counted (default 100 µs)",
    )
    opt.add_reports_dir(parser)
    parser.set_defaults(func=run)


def ratio(text: str) -> float:
    value = opt.seconds(text)  # finite and positive, then:
    if value < 1:
        raise argparse.ArgumentTypeError(f"a ratio threshold must be at least 1, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    with Store(opt.reports_dir(args) / "results.sqlite", readonly=True) as store:
        return compare(store, args.run_a, args.run_b, args.threshold, args.floor_us)
