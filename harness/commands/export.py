"""`tokensieve export RUN --table cells|steps|findings|bugs --format csv|parquet|jsonl`: one
of a run's tables as a file (`harness.frames.export` does the work)."""

from __future__ import annotations

import argparse

from harness import frames
from harness.commands import options as opt


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a run's cells, steps, findings or bugs as CSV, Parquet or JSON Lines",
        description="Write one table of a run as a file, the same frame "
        "harness.frames gives a notebook: cells (one row per bench cell: keys, release, "
        "corpus set, spec features, status, timings, memory, states, host, session), steps "
        "(one row per timed fill or advance), findings or bugs (of the run's differential "
        "test). CSV reads back with pandas.read_csv as the same frame.",
    )
    p.add_argument("run", type=opt.run_name, metavar="RUN", help="the run's name")
    p.add_argument("--table", choices=tuple(frames.TABLES), default="cells", help="(cells)")
    p.add_argument("--format", choices=frames.FORMATS, default="csv", help="(csv)")
    p.add_argument(
        "--out",
        type=opt.output_file,
        metavar="FILE",
        help="where to write it (default REPORTS_DIR/RUN/TABLE.FORMAT; its directory must exist)",
    )
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = frames.export(opt.reports_dir(args), args.run, args.table, args.format, args.out)
    print(path)
    return 0
