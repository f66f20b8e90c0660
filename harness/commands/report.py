"""`tokensieve report RUN`: write REPORTS_DIR/RUN/index.html (with CSVs and PNGs) from the
results database, and print the run's summary table."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import TokensieveError
from harness.report import bench_page as report
from harness.store.db import REPORTS_DIR, Store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a run's HTML report (tables, CSVs, plots) and print its summary",
        description="Write REPORTS_DIR/RUN/index.html with CSV tables and PNG plots beside it "
        "(static, readable offline), and print the run's summary table. Works on a run "
        "still in progress or interrupted: it reports the cells recorded so far.",
    )
    parser.add_argument("run", metavar="RUN", nargs="?", help="run name (default: the latest)")
    parser.add_argument(
        "--reports-dir",
        metavar="DIR",
        default=str(REPORTS_DIR),
        help="where results.sqlite and the RUN/ report folders live (default reports/)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    reports_dir = Path(args.reports_dir)
    with open_store(reports_dir) as store:
        name = args.run or latest(store)
        store.run(name)  # an unknown name fails here, listing the recorded runs
        print(report.summary_text(store, name))
        index = report.write(store, name, reports_dir / name)
        print(f"report: {index}")
    return 0


def open_store(reports_dir: Path) -> Store:
    """The existing results database of `reports_dir` (never creates one)."""
    path = reports_dir / "results.sqlite"
    if not path.is_file():
        raise TokensieveError(f"no results database at {path}; run `tokensieve bench` first")
    return Store(path)


def latest(store: Store) -> str:
    runs = store.runs()
    if not runs:
        raise TokensieveError(f"no run recorded in {store.path}; run `tokensieve bench` first")
    return runs[-1].name
