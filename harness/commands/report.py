"""`tokensieve report RUN`: write REPORTS_DIR/RUN/index.html (with CSVs and PNGs) from the
results database, and print the run's summary table. The database is only read, so this
works on a run still being measured and on read-only media (`--out` then puts the pages
elsewhere)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import runs
from harness.commands import options as opt


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a run's HTML report (tables, CSVs, plots) and print its summary",
        description="Write REPORTS_DIR/RUN/index.html with CSV tables and PNG plots beside it "
        "(static, readable offline), and print the run's summary table. Works on a run "
        "still in progress or interrupted: it reports the cells recorded so far. For a run "
        "that is only a diff or a jump-forward run, rewrite its page (diff.html, "
        "jumpforward.html) from its stored data.",
    )
    parser.add_argument(
        "run", metavar="RUN", nargs="?", type=opt.run_name, help="run name (default: the latest)"
    )
    opt.add_reports_dir(parser)
    parser.add_argument(
        "--out", metavar="DIR", help="where to write the report (default REPORTS_DIR/RUN)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    return runs.report_run(opt.reports_dir(args), args.run, out)
